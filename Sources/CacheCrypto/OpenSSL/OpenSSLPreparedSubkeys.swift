#if !canImport(CryptoKit)
import CacheCore
import COpenSSL
import Foundation

extension OpenSSLBackend {
    /// Prepares an HMAC-SHA-256 key: `EVP_MAC` "HMAC" fetched once, keyed contexts reused.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    package static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey {
        try OpenSSLHMACSubkey(key: key)
    }

    /// Prepares an AES-256-GCM key: the cipher fetched once, keyed contexts reused (only the nonce is set
    /// per call, so the key schedule and GHASH tables are computed once per context).
    ///
    /// - Parameter key: The 256-bit key, exactly 32 bytes.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key size; ``CryptoFailure/backend(_:)`` when
    ///   the library fails.
    package static func prepareAESGCM(key: Data) throws -> any PreparedAESGCMSubkey {
        try validateAESGCM(key: key, nonce: Data(count: aesGCMNonceByteCount))
        return try OpenSSLAESGCMSubkey(key: key)
    }

    /// Fills `buffer` straight from `RAND_bytes`; see ``CryptoProvider/fillRandom(_:)``.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a buffer over `Int32.max` bytes;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails.
    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        try validateRandomByteCount(buffer.count)
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        guard RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            throw libraryFailure("RAND_bytes")
        }
    }
}

/// Library contexts that one thread at a time may borrow: taken out under the lock, used without it,
/// put back under it. A context is never in two threads' hands at once, which is what OpenSSL requires.
/// At most `capacity` idle contexts are kept; the rest are freed on return.
final class ContextPool: Sendable {
    private let idle = Locked<[OpaquePointer]>([])
    private let capacity: Int
    private let make: @Sendable () throws -> OpaquePointer
    private let free: @Sendable (OpaquePointer) -> Void

    init(
        capacity: Int, make: @escaping @Sendable () throws -> OpaquePointer,
        free: @escaping @Sendable (OpaquePointer) -> Void
    ) {
        self.capacity = capacity
        self.make = make
        self.free = free
    }

    /// Runs `body` with a context no other thread is using.
    ///
    /// A context whose use threw is freed rather than returned, so a half-finished operation never
    /// leaks state into the next one.
    func withContext<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let context = try idle.withLock { $0.popLast() } ?? make()
        let result: R
        do {
            result = try body(context)
        } catch {
            free(context)
            throw error
        }
        let surplus: OpaquePointer? = idle.withLock { contexts in
            guard contexts.count < capacity else { return context }
            contexts.append(context)
            return nil
        }
        if let surplus { free(surplus) }
        return result
    }

    deinit {
        for context in idle.withLock({ $0 }) { free(context) }
    }
}

/// HMAC-SHA-256 with keyed `EVP_MAC_CTX`s: `EVP_MAC_init` with a NULL key restarts a context with the key
/// it already holds, which skips fetching the algorithm and hashing the padded key on every call.
final class OpenSSLHMACSubkey: PreparedHMACSubkey {
    private let pool: ContextPool

    init(key: Data) throws {
        let keyCopy = key
        pool = ContextPool(
            capacity: 16,
            make: {
                guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
                    throw OpenSSLBackend.libraryFailure("EVP_MAC_fetch(HMAC)")
                }
                defer { EVP_MAC_free(mac) }
                guard let context = EVP_MAC_CTX_new(mac) else { throw OpenSSLBackend.libraryFailure("EVP_MAC_CTX_new") }
                do {
                    try OpenSSLBackend.withCStrings([OSSL_MAC_PARAM_DIGEST, "SHA256"]) { names in
                        let parameters = [
                            OSSL_PARAM_construct_utf8_string(names[0], names[1], 0), OSSL_PARAM_construct_end(),
                        ]
                        // A NULL key would mean "keep the previous one", so an empty key gets a real pointer.
                        // The key is passed in place: no extra copy of it is left in freed memory.
                        try keyCopy.withUnsafeBytes { raw in
                            var zero: UInt8 = 0
                            try withUnsafeMutablePointer(to: &zero) { zeroPointer in
                                let base =
                                    raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(zeroPointer)
                                try OpenSSLBackend.check(
                                    EVP_MAC_init(context, base, raw.count, parameters), "EVP_MAC_init(HMAC-SHA256)")
                            }
                        }
                    }
                } catch {
                    EVP_MAC_CTX_free(context)
                    throw error
                }
                return context
            },
            free: { EVP_MAC_CTX_free($0) })
    }

    func authenticate(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) throws {
        guard mac.count == 32, let output = mac.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw CryptoFailure.invalidInput("HMAC-SHA-256 output must be 32 bytes, got \(mac.count)")
        }
        try pool.withContext { context in
            try OpenSSLBackend.check(EVP_MAC_init(context, nil, 0, nil), "EVP_MAC_init(reuse key)")
            if let base = message.baseAddress, !message.isEmpty {
                try OpenSSLBackend.check(
                    EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), message.count), "EVP_MAC_update")
            }
            var written = 0
            try OpenSSLBackend.check(EVP_MAC_final(context, output, &written, 32), "EVP_MAC_final")
            guard written == 32 else { throw CryptoFailure.backend("HMAC-SHA-256 wrote \(written) bytes") }
        }
    }
}

/// AES-256-GCM with keyed `EVP_CIPHER_CTX`s: each call sets only the nonce and the direction
/// (`EVP_CipherInit_ex2` with no cipher and no key keeps both), so the cipher is fetched and the key
/// expanded once per context instead of once per call.
final class OpenSSLAESGCMSubkey: PreparedAESGCMSubkey {
    private let pool: ContextPool

    init(key: Data) throws {
        let keyCopy = key
        pool = ContextPool(
            capacity: 16,
            make: {
                guard let cipher = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
                    throw OpenSSLBackend.libraryFailure("EVP_CIPHER_fetch(AES-256-GCM)")
                }
                defer { EVP_CIPHER_free(cipher) }
                guard let context = EVP_CIPHER_CTX_new() else {
                    throw OpenSSLBackend.libraryFailure("EVP_CIPHER_CTX_new")
                }
                do {
                    try OpenSSLBackend.check(
                        EVP_CipherInit_ex2(context, cipher, nil, nil, 1, nil), "EVP_CipherInit_ex2(aes-256-gcm)")
                    try OpenSSLBackend.check(
                        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, nil), "EVP_CTRL_GCM_SET_IVLEN")
                    try keyCopy.withUnsafeBytes { keyBytes in
                        try OpenSSLBackend.check(
                            EVP_CipherInit_ex2(
                                context, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, 1, nil),
                            "EVP_CipherInit_ex2(key)")
                    }
                } catch {
                    EVP_CIPHER_CTX_free(context)
                    throw error
                }
                return context
            },
            free: { EVP_CIPHER_CTX_free($0) })
    }

    func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        try pool.withContext { context in
            try startSealing(context, nonce: nonce, associatedData: associatedData)
            try update(context, first, into: ciphertext.baseAddress, "EVP_EncryptUpdate")
            try update(context, second, into: ciphertext.baseAddress.map { $0 + first.count }, "EVP_EncryptUpdate")
            try finishSealing(context, tag: tag)
        }
    }

    func seal(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws {
        let total = first.count + second.count
        try validatePreparedAESGCM(nonce: nonce.count, tag: tag.count, ciphertext: total, plaintext: total)
        let pieceSize = max(1, min(chunkSize, total))
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 16)
        defer { piece.deallocate() }
        try pool.withContext { context in
            try startSealing(context, nonce: nonce, associatedData: associatedData)
            for part in [first, second] {
                var start = 0
                while start < part.count {
                    let end = min(start + pieceSize, part.count)
                    try update(
                        context, UnsafeRawBufferPointer(rebasing: part[start..<end]), into: piece.baseAddress,
                        "EVP_EncryptUpdate")
                    try output(UnsafeRawBufferPointer(rebasing: piece[0..<(end - start)]))
                    start = end
                }
            }
            try finishSealing(context, tag: tag)
        }
    }

    func open(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws {
        try validatePreparedAESGCM(
            nonce: nonce.count, tag: tag.count, ciphertext: ciphertext.count, plaintext: first.count + second.count)
        do {
            try pool.withContext { context in
                try OpenSSLBackend.check(
                    EVP_CipherInit_ex2(context, nil, nil, bytes(nonce), 0, nil), "EVP_CipherInit_ex2(nonce)")
                try update(context, associatedData, into: nil, "EVP_DecryptUpdate(aad)")
                try update(
                    context, UnsafeRawBufferPointer(rebasing: ciphertext[..<first.count]), into: first.baseAddress,
                    "EVP_DecryptUpdate")
                try update(
                    context, UnsafeRawBufferPointer(rebasing: ciphertext[first.count...]), into: second.baseAddress,
                    "EVP_DecryptUpdate")
                // EVP_CTRL_GCM_SET_TAG takes a non-const pointer; OpenSSL copies the tag and never writes it.
                try OpenSSLBackend.check(
                    EVP_CIPHER_CTX_ctrl(
                        context, EVP_CTRL_GCM_SET_TAG, 16, UnsafeMutableRawPointer(mutating: tag.baseAddress)),
                    "EVP_CTRL_GCM_SET_TAG")
                var trailerCount: Int32 = 0
                let verified = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { trailer in
                    EVP_DecryptFinal_ex(context, trailer.baseAddress, &trailerCount) > 0
                }
                guard verified else {
                    ERR_clear_error()
                    throw CryptoFailure.authenticationFailed
                }
                guard trailerCount == 0 else {
                    throw CryptoFailure.backend("AES-GCM wrote \(trailerCount) extra bytes")
                }
            }
        } catch {
            // Unauthenticated plaintext must never escape, not even in freed memory.
            secureZero(first)
            secureZero(second)
            throw error
        }
    }

    /// Sets the nonce for encryption (keeping the context's cipher and key) and feeds the associated data.
    private func startSealing(
        _ context: OpaquePointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer
    ) throws {
        try OpenSSLBackend.check(
            EVP_CipherInit_ex2(context, nil, nil, bytes(nonce), 1, nil), "EVP_CipherInit_ex2(nonce)")
        try update(context, associatedData, into: nil, "EVP_EncryptUpdate(aad)")
    }

    /// Finishes an encryption and writes the 16-byte tag.
    private func finishSealing(_ context: OpaquePointer, tag: UnsafeMutableRawBufferPointer) throws {
        // GCM is a stream mode: finishing writes no more ciphertext, but it computes the tag.
        var trailerCount: Int32 = 0
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { trailer in
            try OpenSSLBackend.check(
                EVP_EncryptFinal_ex(context, trailer.baseAddress, &trailerCount), "EVP_EncryptFinal_ex")
        }
        guard trailerCount == 0 else { throw CryptoFailure.backend("AES-GCM wrote \(trailerCount) extra bytes") }
        try OpenSSLBackend.check(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag.baseAddress), "EVP_CTRL_GCM_GET_TAG")
    }

    /// Feeds `input` to the cipher, writing to `output` (NULL feeds associated data).
    private func update(
        _ context: OpaquePointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer?,
        _ operation: @autoclosure () -> String
    ) throws {
        guard let base = input.baseAddress, !input.isEmpty else { return }
        var written: Int32 = 0
        try OpenSSLBackend.check(
            EVP_CipherUpdate(
                context, output?.assumingMemoryBound(to: UInt8.self), &written,
                base.assumingMemoryBound(to: UInt8.self),
                Int32(input.count)), operation())
        guard output == nil || Int(written) == input.count else {
            throw CryptoFailure.backend("AES-GCM wrote \(written) bytes for \(input.count)")
        }
    }

    private func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
#endif  // !canImport(CryptoKit): Apple platforms use the fallbacks in PreparedSubkeys.swift over CryptoKit
