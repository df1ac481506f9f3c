import Foundation

// Keys set up once and used for many operations. A store computes one HMAC per operation (the file name)
// and one AES-GCM seal or open; setting up the library's context for each call cost more than the
// computation itself for small entries (fetching the algorithm, expanding the key, allocating contexts).
// A back end that can keep keyed contexts overrides `prepareHMACSHA256(key:)` and `prepareAESGCM(key:)`;
// the fallbacks below call the one-shot functions, so a back end without a faster path stays correct.

/// An HMAC-SHA-256 key (RFC 2104, FIPS 180-4) ready for many messages.
///
/// Thread safety: every conformer may be used from any number of threads at once.
package protocol PreparedHMACSubkey: Sendable {
    /// Computes HMAC-SHA-256 of `message` into `mac`.
    ///
    /// - Parameters:
    ///   - message: The message; may be empty.
    ///   - mac: Receives the 32-byte MAC; must be exactly 32 bytes.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong output size; ``CryptoFailure/backend(_:)``
    ///   when the library fails.
    /// - Complexity: O(n) in the size of `message`.
    func authenticate(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) throws
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
    func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws

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
    func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws

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
    func open(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws
}

extension PreparedAESGCMSubkey {
    /// The fallback for back ends that cannot stream: seals into one buffer, then hands it out in pieces.
    package func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws {
        let ciphertext = UnsafeMutableRawBufferPointer.allocate(byteCount: first.count + second.count, alignment: 16)
        defer { ciphertext.deallocate() }
        try seal(
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

extension CryptoProvider {
    /// Prepares `key` for many HMAC-SHA-256 computations; the fallback calls ``hmacSHA256(key:data:)``.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    package static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey {
        OneShotHMACSubkey<Self>(key: key)
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

    /// Fills `buffer` with random bytes; the fallback copies from ``randomBytes(count:)``.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: What ``randomBytes(count:)`` throws.
    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        buffer.copyBytes(from: try randomBytes(count: buffer.count))
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

/// The fallback ``PreparedHMACSubkey``: the one-shot function on every call.
private struct OneShotHMACSubkey<Provider: CryptoProvider>: PreparedHMACSubkey {
    let key: Data

    func authenticate(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) throws {
        guard mac.count == 32 else { throw CryptoFailure.invalidInput("HMAC-SHA-256 output must be 32 bytes") }
        mac.copyBytes(from: try Provider.hmacSHA256(key: key, data: Data(message)))
    }
}

/// The fallback ``PreparedAESGCMSubkey``: concatenates, calls the one-shot functions, and splits.
private struct OneShotAESGCMSubkey<Provider: CryptoProvider>: PreparedAESGCMSubkey {
    let key: Data

    func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        var plaintext = Data(first)
        plaintext.append(contentsOf: second)
        let sealed = try Provider.sealAESGCM(
            key: key, nonce: Data(nonce), plaintext: plaintext, associatedData: Data(associatedData))
        ciphertext.copyBytes(from: sealed.ciphertext)
        tag.copyBytes(from: sealed.tag)
    }

    func open(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        let plaintext = try Provider.openAESGCM(
            key: key, nonce: Data(nonce), ciphertext: Data(ciphertext), tag: Data(tag),
            associatedData: Data(associatedData))
        guard plaintext.count == ciphertext.count else { throw CryptoFailure.authenticationFailed }
        first.copyBytes(from: plaintext.prefix(first.count))
        second.copyBytes(from: plaintext.dropFirst(first.count))
    }
}
