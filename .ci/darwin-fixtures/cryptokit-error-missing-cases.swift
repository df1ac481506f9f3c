// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. Apple's CryptoKitError has seven
// cases (https://developer.apple.com/documentation/cryptokit/cryptokiterror); a switch that handles only the
// four older ones must not pass, even with a default elsewhere missing.
// expect: switch must be exhaustive
import CryptoKit

func describe(_ error: CryptoKitError) -> String {
    switch error {
    case .incorrectKeySize: return "key size"
    case .incorrectParameterSize: return "parameter size"
    case .authenticationFailure: return "authentication"
    case .underlyingCoreCryptoError: return "corecrypto"
    }
}
