#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Tells a wrong master key apart from damaged data: a known plaintext sealed with AES-256-GCM (NIST SP
/// 800-38D) under the key-check subkey (``StoreSubkeys/keyCheckSubkey(master:)``), kept beside a short
/// public fingerprint of that subkey.
///
/// A tier keeps one such record per store or namespace (the disk tier in its `store.check` file, whose
/// layout Docs/DiskFormat.md specifies; the layout and where the record lives are the tier's). On open, a
/// fingerprint that differs means another master key (`wrongMasterKey`), and a matching fingerprint whose
/// seal does not open means damage: the two are never confused, so a tier never deletes data sealed under
/// a key it does not hold.
///
/// Thread safety: stateless; every function may be called from any thread.
package enum MasterKeyCheck {
    /// The size of a fingerprint in bytes (128 bits: enough to tell keys apart, too short to matter).
    package static let fingerprintByteCount = 16
    /// The nonce size of the seal (96 bits).
    package static let nonceByteCount = 12
    /// The tag size of the seal (128 bits).
    package static let tagByteCount = 16

    /// The size of ``seal(_:associatedData:checkSubkey:)``'s output for `plaintextByteCount` bytes.
    package static func sealedByteCount(plaintextByteCount: Int) -> Int {
        nonceByteCount + plaintextByteCount + tagByteCount
    }

    /// A short public value that identifies the master key: the first 16 bytes of HMAC-SHA-256 of `context`
    /// under the key-check subkey.
    ///
    /// - Parameters:
    ///   - checkSubkey: The key-check subkey.
    ///   - context: A constant naming the format (a changed constant gives unrelated fingerprints).
    /// - Returns: 16 bytes.
    /// - Throws: ``CryptoFailure`` when the crypto library fails.
    package static func fingerprint(checkSubkey: Data, context: Data) throws -> Data {
        try CryptoBackend.hmacSHA256(key: checkSubkey, data: context).prefix(fingerprintByteCount)
    }

    /// Seals `knownPlaintext` under a fresh random nonce.
    ///
    /// - Parameters:
    ///   - knownPlaintext: The constant that opening must give back.
    ///   - associatedData: What the record binds without encrypting (its header).
    ///   - checkSubkey: The key-check subkey.
    /// - Returns: The nonce, the ciphertext and the tag, in that order.
    /// - Throws: ``CryptoFailure`` when the crypto library or the random generator fails.
    package static func seal(_ knownPlaintext: Data, associatedData: Data, checkSubkey: Data) throws -> Data {
        let nonce = try CryptoBackend.randomBytes(count: nonceByteCount)
        let sealed = try CryptoBackend.sealAESGCM(
            key: checkSubkey, nonce: nonce, plaintext: knownPlaintext, associatedData: associatedData)
        var output = nonce
        output.append(sealed.ciphertext)
        output.append(sealed.tag)
        return output
    }

    /// Opens what ``seal(_:associatedData:checkSubkey:)`` produced and tells whether it holds
    /// `knownPlaintext`.
    ///
    /// - Parameters:
    ///   - sealed: The nonce, ciphertext and tag; exactly ``sealedByteCount(plaintextByteCount:)`` bytes.
    ///   - knownPlaintext: The constant that was sealed.
    ///   - associatedData: The associated data given when sealing.
    ///   - checkSubkey: The key-check subkey.
    /// - Returns: `true` when the seal opens to `knownPlaintext`; `false` when it opens to anything else.
    /// - Throws: ``CryptoFailure/authenticationFailed`` when the tag does not verify; ``CryptoFailure`` for
    ///   a wrong size or a library failure.
    package static func opens(
        _ sealed: Data, to knownPlaintext: Data, associatedData: Data, checkSubkey: Data
    ) throws -> Bool {
        guard sealed.count == sealedByteCount(plaintextByteCount: knownPlaintext.count) else {
            throw CryptoFailure.invalidInput(
                "a sealed key check is \(sealedByteCount(plaintextByteCount: knownPlaintext.count)) bytes, "
                    + "got \(sealed.count)")
        }
        let start = sealed.startIndex
        let plaintext = try CryptoBackend.openAESGCM(
            key: checkSubkey,
            nonce: Data(sealed[start..<start + nonceByteCount]),
            ciphertext: Data(sealed[(start + nonceByteCount)..<(sealed.endIndex - tagByteCount)]),
            tag: Data(sealed[(sealed.endIndex - tagByteCount)...]),
            associatedData: associatedData)
        return plaintext == knownPlaintext
    }
}
