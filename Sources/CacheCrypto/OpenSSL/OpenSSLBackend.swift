#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Linux crypto back end: the system libcrypto (OpenSSL 3) through its EVP interface.
///
/// - AES-256-GCM (NIST SP 800-38D): `EVP_CIPHER_CTX` with `EVP_aes_256_gcm`, a 12-byte nonce and a 16-byte tag
///   (AESGCM/AESGCM_OpenSSL.swift).
/// - HMAC-SHA-256 (RFC 2104, FIPS 180-4): the one-shot `HMAC()` (HMAC/HMAC_OpenSSL.swift).
/// - HKDF-SHA-256 (RFC 5869): `EVP_KDF` "HKDF" in extract-and-expand mode (HKDF/HKDF_OpenSSL.swift).
/// - Random bytes: `RAND_bytes`, OpenSSL's seeded CSPRNG (SecureRandom/SecureRandom_OpenSSL.swift).
///
/// Thread safety: every function creates and frees its own context, so calls may run on any threads at once.
/// Every entry point first initializes the library once, without its exit handler (``libraryIsReady``);
/// OpenSSL reports errors through a per-thread queue, which each failing call drains into its
/// ``CryptoFailure/backend(_:)`` message.
package enum OpenSSLBackend: CryptoProvider {}

// MARK: - Initialization

extension OpenSSLBackend {
    /// Whether libcrypto initialized; evaluated once per process, before the first call into the library.
    ///
    /// Left to itself, OpenSSL initializes on first use and registers an `atexit` handler that frees its
    /// global state (the default library context, providers, the random generator). A process that exits
    /// while other threads are inside libcrypto (a tier sealing on a pool thread while `main` returns) then
    /// has those threads use freed memory and can crash on its way out. `OPENSSL_INIT_NO_ATEXIT` keeps the
    /// state until the process is gone; the kernel reclaims it. The flag only counts on the process's first
    /// initialization, so this runs before any other libcrypto call of this module (the TLS transport
    /// passes the same flag to `OPENSSL_init_ssl`; whichever runs first decides, and both say the same).
    /// Thread safety: a `static let`, initialized once under Swift's lazy-global lock.
    static let libraryIsReady: Bool = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Initializes libcrypto before first use (see ``libraryIsReady``); O(1) after the first call.
    ///
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library could not initialize.
    static func prepareLibrary() throws {
        guard libraryIsReady else { throw libraryFailure("OPENSSL_init_crypto") }
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
    static func int32Count(of data: Data, _ what: String) throws -> Int32 {
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
func withNonNullBytes<Result>(
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
func uint8Base(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
    buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
}
#endif  // !canImport(CryptoKit): Apple platforms use CryptoKit (CryptoKit/CryptoKitBackend.swift)
