// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. CryptoKitError is not frozen in
// Apple's SDK (https://developer.apple.com/documentation/cryptokit/cryptokiterror), so a switch over it needs
// `@unknown default`; exhausting the seven documented cases is not enough.
// expect: may have additional unknown values
import CryptoKit

func describe(_ error: CryptoKitError) -> String {
    switch error {
    case .incorrectKeySize: return "key size"
    case .incorrectParameterSize: return "parameter size"
    case .authenticationFailure: return "authentication"
    case .underlyingCoreCryptoError: return "corecrypto"
    case .wrapFailure: return "wrap"
    case .unwrapFailure: return "unwrap"
    case .invalidParameter: return "parameter"
    }
}
