#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// AES-256-GCM (NIST SP 800-38D), the platform-free interface: the one-shot seal and open, and subkeys
// prepared once for many calls. The back ends are AESGCM_OpenSSL.swift (libcrypto, Linux) and
// AESGCM_CryptoKit.swift (Apple platforms); both reject the same inputs with the same messages.

/// AES-256-GCM as a crypto back end provides it.
///
/// Thread safety: every requirement may be called from any number of threads at once.
package protocol AESGCMPrimitive {
    /// Encrypts and authenticates `plaintext` with AES-256-GCM (NIST SP 800-38D).
    ///
    /// - Parameters:
    ///   - key: The 256-bit key, exactly 32 bytes.
    ///   - nonce: The 96-bit nonce, exactly 12 bytes. Never reuse a nonce under one key.
    ///   - plaintext: The bytes to encrypt; may be empty.
    ///   - associatedData: Bytes authenticated but not encrypted (for example a file header); may be empty.
    /// - Returns: The ciphertext (as long as `plaintext`) and the 16-byte authentication tag.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key or nonce size or an input too large
    ///   for the library (over `Int32.max` bytes); ``CryptoFailure/backend(_:)`` when the library fails.
    /// - Complexity: O(n) in the size of `plaintext` plus `associatedData`.
    static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data)

    /// Checks the tag and decrypts `ciphertext` with AES-256-GCM (NIST SP 800-38D).
    ///
    /// No plaintext is returned unless the tag verifies over the ciphertext and `associatedData`.
    ///
    /// - Parameters:
    ///   - key: The 256-bit key, exactly 32 bytes.
    ///   - nonce: The 96-bit nonce the data was sealed with, exactly 12 bytes.
    ///   - ciphertext: The encrypted bytes; may be empty.
    ///   - tag: The 16-byte tag (truncated tags are refused).
    ///   - associatedData: The associated data given to ``sealAESGCM(key:nonce:plaintext:associatedData:)``.
    /// - Returns: The plaintext.
    /// - Throws: ``CryptoFailure/authenticationFailed`` when the tag does not verify (wrong key, or
    ///   tampered ciphertext, tag, nonce or associated data); ``CryptoFailure/invalidInput(_:)`` for a
    ///   wrong key, nonce or tag size; ``CryptoFailure/backend(_:)`` when the library fails.
    /// - Complexity: O(n) in the size of `ciphertext` plus `associatedData`.
    static func openAESGCM(key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data) throws -> Data

    /// Prepares an AES-256-GCM key for many seals and opens (see ``PreparedAESGCMSubkey``); a default that
    /// calls the one-shot functions each time is provided.
    ///
    /// - Parameter key: The 256-bit key, exactly 32 bytes.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key size; ``CryptoFailure/backend(_:)`` when
    ///   the library fails.
    static func prepareAESGCM(key: Data) throws -> any PreparedAESGCMSubkey
}

extension AESGCMPrimitive {
    /// The AES-256 key size in bytes (256 bits).
    package static var aesGCMKeyByteCount: Int { 32 }

    /// The AES-GCM nonce size in bytes: 96 bits, the size NIST SP 800-38D §5.2.1.1 recommends.
    package static var aesGCMNonceByteCount: Int { 12 }

    /// The AES-GCM tag size in bytes: the full 128 bits; shorter tags are refused.
    package static var aesGCMTagByteCount: Int { 16 }

    /// Checks the key, nonce and (when given) tag sizes for an AES-256-GCM call.
    ///
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` naming the first argument of the wrong size.
    package static func validateAESGCM(key: Data, nonce: Data, tag: Data? = nil) throws {
        guard key.count == aesGCMKeyByteCount else {
            throw CryptoFailure.invalidInput("AES-256-GCM key must be \(aesGCMKeyByteCount) bytes, got \(key.count)")
        }
        guard nonce.count == aesGCMNonceByteCount else {
            throw CryptoFailure.invalidInput(
                "AES-GCM nonce must be \(aesGCMNonceByteCount) bytes, got \(nonce.count)")
        }
        if let tag, tag.count != aesGCMTagByteCount {
            throw CryptoFailure.invalidInput("AES-GCM tag must be \(aesGCMTagByteCount) bytes, got \(tag.count)")
        }
    }

    /// Prepares `key` for many AES-256-GCM seals and opens; the fallback calls the one-shot functions.
    ///
    /// - Parameter key: The 256-bit key, exactly 32 bytes.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key size; ``CryptoFailure/backend(_:)`` when
    ///   the library fails.
    package static func prepareAESGCM(key: Data) throws -> any PreparedAESGCMSubkey {
        try validateAESGCM(key: key, nonce: Data(count: aesGCMNonceByteCount))
        return OneShotAESGCMSubkey<Self>(key: key)
    }
}

/// An AES-256-GCM key (NIST SP 800-38D) ready for many seals and opens, each under its own nonce.
///
/// The plaintext comes in (and goes out as) two parts, so a caller can encrypt a key and a value that
/// live in separate buffers into one ciphertext, and decrypt one ciphertext into separate buffers,
/// without concatenating or splitting copies. GCM is a stream mode, so the ciphertext is the same as
/// for the concatenated plaintext.
///
/// Thread safety: every conformer may be used from any number of threads at once.
package protocol PreparedAESGCMSubkey: Sendable {
    /// ``seal(nonce:associatedData:first:second:ciphertext:tag:)`` once the sizes were checked.
    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws

    /// ``seal(nonce:associatedData:first:second:chunkSize:output:tag:)`` once the sizes were checked; a
    /// default seals into one buffer for back ends that cannot stream.
    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws

    /// ``open(nonce:associatedData:ciphertext:tag:first:second:)`` once the sizes were checked.
    func openChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws
}

// The sizes are checked here, once, for every back end (`validatePreparedAESGCM`).
extension PreparedAESGCMSubkey {

    /// Encrypts `first` followed by `second` into `ciphertext` and writes the tag.
    ///
    /// - Parameters:
    ///   - nonce: The 12-byte nonce; never reuse one under a key.
    ///   - associatedData: Bytes authenticated but not encrypted; may be empty.
    ///   - first: The first part of the plaintext; may be empty.
    ///   - second: The second part of the plaintext; may be empty.
    ///   - ciphertext: Receives the ciphertext; exactly `first.count + second.count` bytes.
    ///   - tag: Receives the 16-byte tag; exactly 16 bytes.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for wrong sizes; ``CryptoFailure/backend(_:)`` when the
    ///   library fails.
    /// - Complexity: O(n) in the size of the plaintext and associated data.
    package func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        try sealChecked(
            nonce: nonce, associatedData: associatedData, first: first, second: second, ciphertext: ciphertext,
            tag: tag)
    }

    /// Encrypts `first` followed by `second` like ``seal(nonce:associatedData:first:second:ciphertext:tag:)``,
    /// but hands the ciphertext to `output` in pieces of at most `chunkSize` bytes instead of into one
    /// buffer, so a large value is never held twice (once as plaintext, once as ciphertext).
    ///
    /// - Parameters:
    ///   - chunkSize: The largest piece, in bytes (at least 1).
    ///   - output: Called with each piece in order; the bytes live only for the call.
    /// - Throws: What `output` throws, or what the one-buffer seal throws.
    /// - Complexity: O(n) in the size of the plaintext; memory O(`chunkSize`) in back ends that can stream
    ///   (OpenSSL), O(n) in the others (CryptoKit seals in one call).
    package func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws {
        let total = first.count + second.count
        try validatePreparedAESGCM(nonce: nonce.count, tag: tag.count, ciphertext: total, plaintext: total)
        try sealChecked(
            nonce: nonce, associatedData: associatedData, first: first, second: second, chunkSize: chunkSize,
            output: output, tag: tag)
    }

    /// Checks the tag and decrypts `ciphertext` into `first` (its first `first.count` bytes) and `second`
    /// (the rest).
    ///
    /// On failure the outputs hold no plaintext: they are zeroed before the error is thrown.
    ///
    /// - Parameters:
    ///   - nonce: The 12-byte nonce the data was sealed with.
    ///   - associatedData: The associated data given when sealing.
    ///   - ciphertext: The encrypted bytes; exactly `first.count + second.count` bytes.
    ///   - tag: The 16-byte tag.
    ///   - first: Receives the first part of the plaintext.
    ///   - second: Receives the second part of the plaintext.
    /// - Throws: ``CryptoFailure/authenticationFailed`` when the tag does not verify;
    ///   ``CryptoFailure/invalidInput(_:)`` for wrong sizes; ``CryptoFailure/backend(_:)`` when the library
    ///   fails.
    /// - Complexity: O(n) in the size of the ciphertext and associated data.
    package func open(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        try openChecked(
            nonce: nonce, associatedData: associatedData, ciphertext: ciphertext, tag: tag, first: first,
            second: second)
    }

    /// The fallback for back ends that cannot stream: seals into one buffer, then hands it out in pieces.
    package func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws {
        let ciphertext = UnsafeMutableRawBufferPointer.allocate(byteCount: first.count + second.count, alignment: 16)
        defer { ciphertext.deallocate() }
        try sealChecked(
            nonce: nonce, associatedData: associatedData, first: first, second: second, ciphertext: ciphertext,
            tag: tag)
        var start = 0
        while start < ciphertext.count {
            let end = min(start + max(chunkSize, 1), ciphertext.count)
            try output(UnsafeRawBufferPointer(rebasing: ciphertext[start..<end]))
            start = end
        }
    }
}

/// Checks the fixed sizes of a prepared AES-GCM call.
///
/// - Throws: ``CryptoFailure/invalidInput(_:)`` naming the argument of the wrong size.
package func validatePreparedAESGCM(nonce: Int, tag: Int, ciphertext: Int, plaintext: Int) throws {
    guard nonce == 12 else { throw CryptoFailure.invalidInput("AES-GCM nonce must be 12 bytes, got \(nonce)") }
    guard tag == 16 else { throw CryptoFailure.invalidInput("AES-GCM tag must be 16 bytes, got \(tag)") }
    guard ciphertext == plaintext, ciphertext <= Int(Int32.max) else {
        throw CryptoFailure.invalidInput(
            "AES-GCM ciphertext of \(ciphertext) bytes for \(plaintext) bytes of plaintext (limit \(Int32.max))")
    }
}

/// The fallback ``PreparedAESGCMSubkey``: concatenates, calls the one-shot functions, and splits.
private struct OneShotAESGCMSubkey<Provider: AESGCMPrimitive>: PreparedAESGCMSubkey {
    let key: Data

    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        var plaintext = Data(first)
        plaintext.append(contentsOf: second)
        let sealed = try Provider.sealAESGCM(
            key: key, nonce: Data(nonce), plaintext: plaintext, associatedData: Data(associatedData))
        ciphertext.copyBytes(from: sealed.ciphertext)
        tag.copyBytes(from: sealed.tag)
    }

    func openChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws {
        let plaintext = try Provider.openAESGCM(
            key: key, nonce: Data(nonce), ciphertext: Data(ciphertext), tag: Data(tag),
            associatedData: Data(associatedData))
        guard plaintext.count == ciphertext.count else { throw CryptoFailure.authenticationFailed }
        first.copyBytes(from: plaintext.prefix(first.count))
        second.copyBytes(from: plaintext.dropFirst(first.count))
    }
}
