// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. `SymmetricKey.bitCount` is get-only
// (https://developer.apple.com/documentation/cryptokit/symmetrickey/bitcount).
// expect: get-only property
import CryptoKit
import Foundation

func shrink() -> Int {
    var key = SymmetricKey(data: Data(count: 32))
    key.bitCount = 8
    return key.bitCount
}
