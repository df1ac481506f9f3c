import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The 256-bit secret from which every subkey of a store is derived.
///
/// A tier loads it from a ``MasterKeySource``; callers rarely need the type itself, except to make a key of
/// their own to keep (``random()``) or to check bytes they hold (``init(bytes:)``). The master key never
/// encrypts anything itself: HKDF-SHA-256 (RFC 5869) turns it into one subkey per purpose. It is never printed: `description`, `debugDescription` and the mirror that `dump` and the
/// debugger use all show only `MasterKey(<redacted>)`, so it cannot leak into logs by accident.
///
/// Its bytes live in one private allocation that is wiped (`OPENSSL_cleanse` or `memset_s`) when the last
/// copy of the key goes away; the bytes are reachable only inside Strata's modules.
///
/// Thread safety: immutable, `Sendable`.
public struct MasterKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The size of a master key in bytes (256 bits).
    public static let byteCount = 32

    private let storage: KeyStorage

    /// Wraps 32 bytes of key material.
    ///
    /// - Parameter bytes: Exactly ``byteCount`` bytes, which should come from a CSPRNG.
    /// - Throws: `CacheError` `.invalidMasterKey` when `bytes` is not ``byteCount`` bytes long.
    public init(bytes: Data) throws {
        guard bytes.count == Self.byteCount else {
            throw CacheError(
                .invalidMasterKey, "a master key must be \(Self.byteCount) bytes (256 bits), got \(bytes.count) bytes")
        }
        storage = KeyStorage(bytes)
    }

    /// Creates a fresh key from the system's CSPRNG (libcrypto's `RAND_bytes` on Linux,
    /// `SecRandomCopyBytes` on Apple platforms).
    ///
    /// - Returns: A new master key.
    /// - Throws: `CacheError` `.crypto` when the random generator fails.
    public static func random() throws -> MasterKey {
        do {
            return try MasterKey(bytes: CryptoBackend.randomBytes(count: byteCount))
        } catch let failure as CryptoFailure {
            throw CacheError(.crypto, "cannot generate a master key: \(failure)", cause: failure)
        }
    }

    /// Calls `body` with the key's 32 bytes; the pointer is valid only inside `body`.
    ///
    /// - Returns: What `body` returns.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    /// The key's bytes as `Data`, for handing to the crypto back end; keep the copy no longer than the call.
    package var dataForDerivation: Data { withUnsafeBytes { Data($0) } }

    /// Compares keys in constant time, so equality checks leak nothing through timing.
    ///
    /// - Complexity: O(32).
    public static func == (lhs: MasterKey, rhs: MasterKey) -> Bool {
        constantTimeEquals(lhs.dataForDerivation, rhs.dataForDerivation)
    }

    /// `MasterKey(<redacted>)`: the bytes are never shown.
    public var description: String { "MasterKey(<redacted>)" }
    /// `MasterKey(<redacted>)`: the bytes are never shown, not even in debug output.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers cannot reach the bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// The heap storage of a ``MasterKey``: one allocation, wiped before it is freed.
///
/// `@unchecked Sendable` is sound: the one stored property is a `let` pointer; the bytes it points to are
/// written once in `init`, before any other thread can hold the object, only read afterwards
/// (`withUnsafeBytes`), and wiped and freed in `deinit`, when no reference remains.
private final class KeyStorage: @unchecked Sendable {
    private let bytes: UnsafeMutableRawBufferPointer

    init(_ data: Data) {
        bytes = .allocate(byteCount: data.count, alignment: 1)
        _ = data.copyBytes(to: bytes)
    }

    deinit {
        secureZero(bytes)
        bytes.deallocate()
    }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(bytes))
    }
}
