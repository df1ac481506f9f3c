import CacheCore
import Foundation

/// The 256-bit secret from which every DiskCache key is derived (see ``StoreKeys``).
///
/// The master key never encrypts anything itself: HKDF-SHA-256 (RFC 5869) turns it into one subkey per
/// purpose. It is never printed: `description`, `debugDescription` and the mirror that `dump` and the
/// debugger use all show only `MasterKey(<redacted>)`, so it cannot leak into logs by accident.
///
/// Its bytes live in one private allocation that is wiped with ``secureZero(_:)`` when the last copy of the
/// key goes away. Copies made with ``withUnsafeBytes(_:)`` or for derivation are the caller's to keep short.
///
/// Thread safety: immutable, `Sendable`.
struct MasterKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The size of a master key in bytes (256 bits).
    static let byteCount = 32

    private let storage: KeyStorage

    /// Wraps 32 bytes of key material.
    ///
    /// - Parameter bytes: Exactly ``byteCount`` bytes, which should come from a CSPRNG.
    /// - Throws: `CacheError` `.invalidKey` when `bytes` is not ``byteCount`` bytes long.
    init(bytes: Data) throws {
        guard bytes.count == Self.byteCount else {
            throw CacheError(
                .invalidKey, "a master key must be \(Self.byteCount) bytes (256 bits), got \(bytes.count) bytes")
        }
        storage = KeyStorage(bytes)
    }

    /// Creates a fresh key from the crypto back end's CSPRNG.
    ///
    /// - Throws: `CacheError` `.crypto` when the random generator fails.
    static func random() throws -> MasterKey {
        do {
            return try MasterKey(bytes: CryptoBackend.randomBytes(count: byteCount))
        } catch let failure as CryptoFailure {
            throw CacheError(.crypto, "cannot generate a master key: \(failure)", cause: failure)
        }
    }

    /// Calls `body` with the key's 32 bytes; the pointer is valid only inside `body`.
    ///
    /// - Returns: What `body` returns.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    /// The key's bytes as `Data`, for handing to the crypto back end; keep the copy no longer than the call.
    var dataForDerivation: Data { withUnsafeBytes { Data($0) } }

    /// Compares keys in constant time, so equality checks leak nothing through timing.
    static func == (lhs: MasterKey, rhs: MasterKey) -> Bool {
        constantTimeEquals(lhs.dataForDerivation, rhs.dataForDerivation)
    }

    /// `MasterKey(<redacted>)`: the bytes are never shown.
    var description: String { "MasterKey(<redacted>)" }
    /// `MasterKey(<redacted>)`: the bytes are never shown, not even in debug output.
    var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers cannot reach the bytes.
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// The heap storage of a ``MasterKey``: one allocation, wiped before it is freed.
///
/// `@unchecked Sendable` is sound: the bytes are written once in `init`, only read afterwards, and freed in
/// `deinit` when no reference remains.
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
