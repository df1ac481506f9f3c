#if !canImport(CryptoKit)
import COpenSSL
import Foundation

/// The Linux crypto back end: the system libcrypto (OpenSSL 3) through its EVP interface.
///
/// - AES-256-GCM (NIST SP 800-38D): `EVP_CIPHER_CTX` with `EVP_aes_256_gcm`, a 12-byte nonce and a 16-byte tag.
/// - HMAC-SHA-256 (RFC 2104, FIPS 180-4): the one-shot `HMAC()`.
/// - HKDF-SHA-256 (RFC 5869): `EVP_KDF` "HKDF" in extract-and-expand mode, configured with `OSSL_PARAM`s.
/// - Random bytes: `RAND_bytes`, OpenSSL's seeded CSPRNG.
///
/// Thread safety: every function creates and frees its own context, so calls may run on any threads at once.
/// OpenSSL 3 initializes itself on first use and reports errors through a per-thread queue, which each
/// failing call drains into its ``CryptoFailure/backend(_:)`` message.
package enum OpenSSLBackend: CryptoProvider {
    // MARK: - AES-256-GCM

    /// Encrypts and authenticates with AES-256-GCM (NIST SP 800-38D); see
    /// ``CryptoProvider/sealAESGCM(key:nonce:plaintext:associatedData:)``.
    package static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data) {
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
    /// ``CryptoProvider/openAESGCM(key:nonce:ciphertext:tag:associatedData:)``.
    package static func openAESGCM(
        key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data
    ) throws -> Data {
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

    // MARK: - HMAC-SHA-256

    /// Computes HMAC-SHA-256; see ``CryptoProvider/hmacSHA256(key:data:)``.
    package static func hmacSHA256(key: Data, data: Data) throws -> Data {
        let keyCount = try int32Count(of: key, "HMAC key")
        var mac = Data(count: sha256ByteCount)
        var macCount: UInt32 = 0
        let result = mac.withUnsafeMutableBytes { macBytes in
            withNonNullBytes(key) { keyBytes, _ in
                withNonNullBytes(data) { dataBytes, dataCount in
                    HMAC(EVP_sha256(), keyBytes, keyCount, dataBytes, dataCount, uint8Base(macBytes), &macCount)
                }
            }
        }
        guard result != nil, Int(macCount) == sha256ByteCount else { throw libraryFailure("HMAC(sha256)") }
        return mac
    }

    // MARK: - HKDF-SHA-256

    /// Derives key material with HKDF-SHA-256; see ``CryptoProvider/hkdfSHA256(inputKey:salt:info:outputByteCount:)``.
    package static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data {
        try validateHKDF(inputKey: inputKey, outputByteCount: outputByteCount)

        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { throw libraryFailure("EVP_KDF_fetch(HKDF)") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw libraryFailure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }

        var output = Data(count: outputByteCount)
        let names = [OSSL_KDF_PARAM_DIGEST, "SHA256", OSSL_KDF_PARAM_KEY, OSSL_KDF_PARAM_SALT, OSSL_KDF_PARAM_INFO]
        try withCStrings(names) { cNames in
            try withNonNullBytes(inputKey) { keyBytes, keyCount in
                try withNonNullBytes(salt) { saltBytes, saltCount in
                    try withNonNullBytes(info) { infoBytes, infoCount in
                        // OSSL_PARAM takes `void *` even for inputs; OpenSSL copies and never writes them.
                        var parameters = [
                            OSSL_PARAM_construct_utf8_string(cNames[0], cNames[1], 0),
                            OSSL_PARAM_construct_octet_string(
                                cNames[2], UnsafeMutableRawPointer(mutating: keyBytes), keyCount),
                        ]
                        // An absent salt is RFC 5869's default (HashLen zero bytes); an absent info is empty.
                        if saltCount > 0 {
                            parameters.append(
                                OSSL_PARAM_construct_octet_string(
                                    cNames[3], UnsafeMutableRawPointer(mutating: saltBytes), saltCount))
                        }
                        if infoCount > 0 {
                            parameters.append(
                                OSSL_PARAM_construct_octet_string(
                                    cNames[4], UnsafeMutableRawPointer(mutating: infoBytes), infoCount))
                        }
                        parameters.append(OSSL_PARAM_construct_end())
                        try output.withUnsafeMutableBytes { outputBytes in
                            try check(
                                EVP_KDF_derive(context, uint8Base(outputBytes), outputByteCount, parameters),
                                "EVP_KDF_derive(HKDF-SHA256)")
                        }
                    }
                }
            }
        }
        return output
    }

    // MARK: - Random bytes

    /// Returns bytes from `RAND_bytes`; see ``CryptoProvider/randomBytes(count:)``.
    package static func randomBytes(count: Int) throws -> Data {
        try validateRandomByteCount(count)
        guard count > 0 else { return Data() }
        var bytes = Data(count: count)
        let status = bytes.withUnsafeMutableBytes { RAND_bytes(uint8Base($0), Int32(count)) }
        guard status == 1 else { throw libraryFailure("RAND_bytes") }
        return bytes
    }
}

// MARK: - Helpers

extension OpenSSLBackend {
    /// Throws the library's queued errors unless `status` reports success (EVP functions return 1, or
    /// a positive value, on success and 0 or a negative value on failure).
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws {
        guard status > 0 else { throw libraryFailure(operation()) }
    }

    /// Builds a ``CryptoFailure/backend(_:)`` from `operation` and every error queued on this thread.
    ///
    /// Draining the queue matters: OpenSSL's error queue is per thread, and reasons left behind would be
    /// blamed on the next unrelated call made on this thread.
    static func libraryFailure(_ operation: String) -> CryptoFailure {
        var reasons: [String] = []
        var code = ERR_get_error()
        while code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, 256)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            code = ERR_get_error()
        }
        let reason = reasons.isEmpty ? "no reason reported" : reasons.joined(separator: "; ")
        return .backend("\(operation) failed: \(reason)")
    }

    /// The byte count of `data` as the `int` that EVP update functions take.
    fileprivate static func int32Count(of data: Data, _ what: String) throws -> Int32 {
        guard let count = Int32(exactly: data.count) else {
            throw CryptoFailure.invalidInput("\(what) is \(data.count) bytes; the limit is \(Int32.max)")
        }
        return count
    }

    /// Calls `body` with `strings` copied into C storage that stays valid until `body` returns.
    ///
    /// OpenSSL's parameter-name macros (`OSSL_KDF_PARAM_SALT` and the rest) import into Swift as `String`.
    /// An `OSSL_PARAM` keeps the raw `char *` it was built with until the call that reads it, while the
    /// pointer Swift makes for a `String` argument lives only for the one call it is passed to: building an
    /// `OSSL_PARAM` from it would leave a dangling pointer behind.
    static func withCStrings<Result>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>]) throws -> Result
    ) throws -> Result {
        var copies: [UnsafeMutablePointer<CChar>] = []
        defer { copies.forEach { free($0) } }
        for string in strings {
            guard let copy = strdup(string) else { throw CryptoFailure.backend("out of memory copying \(string)") }
            copies.append(copy)
        }
        return try body(copies)
    }
}

/// Calls `body` with a pointer to `data`'s bytes and their count; the pointer is never nil.
///
/// An empty `Data` has no base address, and libcrypto reads NULL as "no value" in places (a NULL HMAC key
/// means "reuse the previous key"), which is not what an empty input means; a pointer to a zero byte with a
/// count of 0 is.
private func withNonNullBytes<Result>(
    _ data: Data, _ body: (UnsafePointer<UInt8>, Int) throws -> Result
) rethrows -> Result {
    try data.withUnsafeBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 {
            return try body(base.assumingMemoryBound(to: UInt8.self), raw.count)
        }
        return try withUnsafePointer(to: UInt8(0)) { try body($0, 0) }
    }
}

/// The typed base address of a mutable byte buffer, as libcrypto's `unsigned char *` outputs want it.
private func uint8Base(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
    buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
}
#endif  // !canImport(CryptoKit): Apple platforms use CryptoKit (Crypto/CryptoKit/CryptoKitBackend.swift)
