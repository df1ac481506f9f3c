// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. `AES.GCM.SealedBox.nonce` is a `let`
// (https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/nonce).
// expect: get-only property
import CryptoKit
import Foundation

func replaceNonce(_ box: AES.GCM.SealedBox) -> AES.GCM.SealedBox {
    var copy = box
    copy.nonce = AES.GCM.Nonce()
    return copy
}
