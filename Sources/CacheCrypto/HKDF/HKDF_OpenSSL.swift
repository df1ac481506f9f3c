#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HKDF-SHA-256 on Linux: libcrypto's `EVP_KDF` "HKDF" in extract-and-expand mode, configured with
// `OSSL_PARAM`s. The interface is HKDF.swift.

extension OpenSSLBackend {
    /// Derives key material with HKDF-SHA-256; see ``HKDFPrimitive/hkdfSHA256(inputKey:salt:info:outputByteCount:)``.
    package static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data {
        try prepareLibrary()
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
}
#endif  // !canImport(CryptoKit): Apple platforms use HKDF_CryptoKit.swift
