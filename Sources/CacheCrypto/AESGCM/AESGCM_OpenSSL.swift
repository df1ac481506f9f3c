#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// AES-256-GCM on Linux: libcrypto's EVP cipher interface (`EVP_CIPHER_CTX` with AES-256-GCM, a 12-byte nonce,
// a 16-byte tag). The interface is AESGCM.swift.

extension OpenSSLBackend {
    /// Encrypts and authenticates with AES-256-GCM (NIST SP 800-38D); see
    /// ``AESGCMPrimitive/sealAESGCM(key:nonce:plaintext:associatedData:)``.
    package static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data) {
        try prepareLibrary()
        try validateAESGCM(key: key, nonce: nonce)
        let plaintextCount = try int32Count(of: plaintext, "plaintext")
        let associatedDataCount = try int32Count(of: associatedData, "associated data")

        guard let context = EVP_CIPHER_CTX_new() else { throw libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }

        // The cipher is chosen first and the key and nonce second, because the nonce length must be set
        // between the two (12 is GCM's default, but stating it keeps the call independent of that default).
        try check(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil), "EVP_EncryptInit_ex(aes-256-gcm)")
        try check(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(aesGCMNonceByteCount), nil),
            "EVP_CTRL_GCM_SET_IVLEN")
        try withNonNullBytes(key) { keyBytes, _ in
            try withNonNullBytes(nonce) { nonceBytes, _ in
                try check(EVP_EncryptInit_ex(context, nil, nil, keyBytes, nonceBytes), "EVP_EncryptInit_ex(key, nonce)")
            }
        }

        if associatedDataCount > 0 {
            var ignored: Int32 = 0
            try withNonNullBytes(associatedData) { bytes, _ in
                // A NULL output buffer tells EVP that these bytes are associated data.
                try check(
                    EVP_EncryptUpdate(context, nil, &ignored, bytes, associatedDataCount), "EVP_EncryptUpdate(aad)")
            }
        }

        var ciphertext = Data(count: plaintext.count)
        var written: Int32 = 0
        if plaintextCount > 0 {
            try ciphertext.withUnsafeMutableBytes { output in
                try withNonNullBytes(plaintext) { input, _ in
                    try check(
                        EVP_EncryptUpdate(context, uint8Base(output), &written, input, plaintextCount),
                        "EVP_EncryptUpdate")
                }
            }
        }
        // GCM is a stream mode: finishing writes no more ciphertext, but it computes the tag.
        var trailer = [UInt8](repeating: 0, count: aesGCMTagByteCount)
        var trailerCount: Int32 = 0
        try check(EVP_EncryptFinal_ex(context, &trailer, &trailerCount), "EVP_EncryptFinal_ex")
        guard Int(written) == plaintext.count, trailerCount == 0 else {
            throw CryptoFailure.backend("AES-GCM wrote \(written + trailerCount) bytes for \(plaintext.count)")
        }

        var tag = Data(count: aesGCMTagByteCount)
        try tag.withUnsafeMutableBytes { tagBytes in
            try check(
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(aesGCMTagByteCount), tagBytes.baseAddress),
                "EVP_CTRL_GCM_GET_TAG")
        }
        return (ciphertext, tag)
    }

    /// Verifies and decrypts with AES-256-GCM; see
    /// ``AESGCMPrimitive/openAESGCM(key:nonce:ciphertext:tag:associatedData:)``.
    package static func openAESGCM(
        key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data
    ) throws -> Data {
        try prepareLibrary()
        try validateAESGCM(key: key, nonce: nonce, tag: tag)
        let ciphertextCount = try int32Count(of: ciphertext, "ciphertext")
        let associatedDataCount = try int32Count(of: associatedData, "associated data")

        guard let context = EVP_CIPHER_CTX_new() else { throw libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }

        try check(EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil), "EVP_DecryptInit_ex(aes-256-gcm)")
        try check(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(aesGCMNonceByteCount), nil),
            "EVP_CTRL_GCM_SET_IVLEN")
        try withNonNullBytes(key) { keyBytes, _ in
            try withNonNullBytes(nonce) { nonceBytes, _ in
                try check(EVP_DecryptInit_ex(context, nil, nil, keyBytes, nonceBytes), "EVP_DecryptInit_ex(key, nonce)")
            }
        }

        if associatedDataCount > 0 {
            var ignored: Int32 = 0
            try withNonNullBytes(associatedData) { bytes, _ in
                try check(
                    EVP_DecryptUpdate(context, nil, &ignored, bytes, associatedDataCount), "EVP_DecryptUpdate(aad)")
            }
        }

        var plaintext = Data(count: ciphertext.count)
        var written: Int32 = 0
        if ciphertextCount > 0 {
            try plaintext.withUnsafeMutableBytes { output in
                try withNonNullBytes(ciphertext) { input, _ in
                    try check(
                        EVP_DecryptUpdate(context, uint8Base(output), &written, input, ciphertextCount),
                        "EVP_DecryptUpdate")
                }
            }
        }

        // EVP_CTRL_GCM_SET_TAG takes a non-const pointer, so the tag is copied into storage we own.
        var expectedTag = [UInt8](tag)
        try check(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(aesGCMTagByteCount), &expectedTag),
            "EVP_CTRL_GCM_SET_TAG")

        var trailer = [UInt8](repeating: 0, count: aesGCMTagByteCount)
        var trailerCount: Int32 = 0
        guard EVP_DecryptFinal_ex(context, &trailer, &trailerCount) > 0 else {
            // Unauthenticated plaintext must never escape, not even in freed memory.
            plaintext.withUnsafeMutableBytes { secureZero($0) }
            ERR_clear_error()
            throw CryptoFailure.authenticationFailed
        }
        guard Int(written) == ciphertext.count, trailerCount == 0 else {
            plaintext.withUnsafeMutableBytes { secureZero($0) }
            throw CryptoFailure.backend("AES-GCM wrote \(written + trailerCount) bytes for \(ciphertext.count)")
        }
        return plaintext
    }

    /// Prepares an AES-256-GCM key: the cipher fetched once, keyed contexts reused (only the nonce is set
    /// per call, so the key schedule and GHASH tables are computed once per context).
    ///
    /// - Parameter key: The 256-bit key, exactly 32 bytes.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key size; ``CryptoFailure/backend(_:)`` when
    ///   the library fails.
    package static func prepareAESGCM(key: Data) throws -> any PreparedAESGCMSubkey {
        try prepareLibrary()
        try validateAESGCM(key: key, nonce: Data(count: aesGCMNonceByteCount))
        return try OpenSSLAESGCMSubkey(key: key)
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
            capacity: 16, names: ("EVP_CIPHER_fetch(AES-256-GCM)", "EVP_CIPHER_CTX_new"),
            fetch: { EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) }, releaseAlgorithm: { EVP_CIPHER_free($0) },
            newContext: { _ in EVP_CIPHER_CTX_new() },
            configure: { context, cipher in
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
            },
            free: { EVP_CIPHER_CTX_free($0) })
    }

    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try pool.withContext { context in
            try startSealing(context, nonce: nonce, associatedData: associatedData)
            try update(context, first, into: ciphertext.baseAddress, "EVP_EncryptUpdate")
            try update(context, second, into: ciphertext.baseAddress.map { $0 + first.count }, "EVP_EncryptUpdate")
            try finishSealing(context, tag: tag)
        }
    }

    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws {
        let total = first.count + second.count
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

    func openChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws {
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
#endif  // !canImport(CryptoKit): Apple platforms use AESGCM_CryptoKit.swift
