#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HMAC-SHA-256 on Linux: libcrypto's one-shot `HMAC()`, and keyed `EVP_MAC` contexts for prepared subkeys.
// The interface is HMAC.swift.

extension OpenSSLBackend {
    /// Computes HMAC-SHA-256; see ``HMACPrimitive/hmacSHA256(key:data:)``.
    package static func hmacSHA256(key: Data, data: Data) throws -> Data {
        try prepareLibrary()
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

    /// Prepares an HMAC-SHA-256 key: `EVP_MAC` "HMAC" fetched once, keyed contexts reused.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    package static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey {
        try prepareLibrary()
        return try OpenSSLHMACSubkey(key: key)
    }
}

/// HMAC-SHA-256 with keyed `EVP_MAC_CTX`s: `EVP_MAC_init` with a NULL key restarts a context with the key
/// it already holds, which skips fetching the algorithm and hashing the padded key on every call.
final class OpenSSLHMACSubkey: PreparedHMACSubkey {
    private let pool: ContextPool

    init(key: Data) throws {
        let keyCopy = key
        pool = ContextPool(
            capacity: 16, names: ("EVP_MAC_fetch(HMAC)", "EVP_MAC_CTX_new"),
            fetch: { EVP_MAC_fetch(nil, "HMAC", nil) }, releaseAlgorithm: { EVP_MAC_free($0) },
            newContext: { EVP_MAC_CTX_new($0) },
            configure: { context, _ in
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
#endif  // !canImport(CryptoKit): Apple platforms use HMAC_CryptoKit.swift
