import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The subkeys one store uses (a disk store, or a namespace of a shared tier), derived from the ``MasterKey``.
///
/// Derivation tree (every arrow is HKDF-SHA-256, RFC 5869, extract then expand, 32 bytes of output):
///
/// ```
/// master key (32 random bytes, key file or caller)
///  ├─ salt = epoch salt,  info = "strata v1 entry encryption" ─▶ encryptionSubkey  (AES-256-GCM, entry files)
///  ├─ salt = naming salt, info = "strata v1 file naming"      ─▶ namingSubkey      (HMAC-SHA-256, file names)
///  └─ salt = none,        info = "strata v1 key check"        ─▶ keyCheckSubkey    (AES-256-GCM, key-check record)
/// ```
///
/// ``derive(master:epochSalt:)`` derives both keys of the first two branches from the one salt it is given.
/// The store calls it with the current epoch salt (32 random bytes kept in its key-check record, replaced
/// on `removeAll()`) and takes the `encryptionSubkey`, so entries written in an earlier epoch no longer decrypt.
/// It calls it again with a fixed naming salt and takes the `namingSubkey`, so that a key's file name stays
/// the same across epochs (see Docs/Security.md for what that trades away).
///
/// The distinct `info` strings make the subkeys independent: learning one says nothing about another or
/// about the master key. The key-check key does not depend on any salt, because it must decrypt the
/// record that holds the epoch salt. The strings carry a version (`v1`): a future format that derives keys
/// differently changes them, so its keys never collide with these.
///
/// Thread safety: immutable, `Sendable`. Never printed: `description` redacts both keys.
package struct StoreSubkeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The HKDF `info` for the entry encryption subkey.
    package static let encryptionInfo = Data("strata v1 entry encryption".utf8)
    /// The HKDF `info` for the naming subkey.
    package static let namingInfo = Data("strata v1 file naming".utf8)
    /// The HKDF `info` for the key-check subkey.
    package static let keyCheckInfo = Data("strata v1 key check".utf8)
    /// The size of every derived key in bytes (256 bits).
    package static let subkeyByteCount = 32
    /// The size of an epoch salt in bytes, as the store generates it.
    package static let epochSaltByteCount = 32

    /// The AES-256-GCM key for entry files in this epoch (32 bytes).
    package let encryptionSubkey: Data
    /// The HMAC-SHA-256 key that turns a cache key's canonical bytes into its file name (32 bytes).
    package let namingSubkey: Data

    /// Derives the encryption and naming keys for one epoch.
    ///
    /// - Parameters:
    ///   - master: The store's master key.
    ///   - epochSalt: The salt: the current epoch's salt from the key-check record (32 random bytes), or the
    ///     store's fixed naming salt. Must not be empty, since an empty salt would give every epoch the same
    ///     keys.
    /// - Returns: The two subkeys, the same for the same master key and salt in every process.
    /// - Throws: `CacheError` `.invalidArgument` for an empty salt; `.crypto` when the back end fails.
    /// - Complexity: Two HKDF computations, a few microseconds.
    package static func derive(master: MasterKey, epochSalt: Data) throws -> StoreSubkeys {
        guard !epochSalt.isEmpty else {
            throw CacheError(.invalidArgument, "the epoch salt must not be empty")
        }
        let inputKey = master.dataForDerivation
        return StoreSubkeys(
            encryptionSubkey: try hkdf(inputKey: inputKey, salt: epochSalt, info: encryptionInfo),
            namingSubkey: try hkdf(inputKey: inputKey, salt: epochSalt, info: namingInfo))
    }

    /// Derives only the naming key of ``derive(master:epochSalt:)``, for a caller that uses no encryption key
    /// under that salt (the store's fixed naming salt): one HKDF computation instead of two, the same bytes.
    ///
    /// - Parameters:
    ///   - master: The store's master key.
    ///   - epochSalt: The salt, as ``derive(master:epochSalt:)`` takes it. Must not be empty.
    /// - Returns: ``namingSubkey`` of `derive(master: master, epochSalt: epochSalt)`.
    /// - Throws: `CacheError` `.invalidArgument` for an empty salt; `.crypto` when the back end fails.
    /// - Complexity: One HKDF computation.
    package static func namingSubkey(master: MasterKey, epochSalt: Data) throws -> Data {
        guard !epochSalt.isEmpty else {
            throw CacheError(.invalidArgument, "the epoch salt must not be empty")
        }
        return try hkdf(inputKey: master.dataForDerivation, salt: epochSalt, info: namingInfo)
    }

    /// Derives the key that encrypts the store's key-check record.
    ///
    /// It uses no salt (RFC 5869's default), so it stays the same across epochs: the record it protects is
    /// where the epoch salt is kept. A master key that cannot open the record is the wrong key.
    ///
    /// - Parameter master: The store's master key.
    /// - Returns: A 32-byte AES-256-GCM key.
    /// - Throws: `CacheError` `.crypto` when the back end fails.
    package static func keyCheckSubkey(master: MasterKey) throws -> Data {
        try hkdf(inputKey: master.dataForDerivation, salt: Data(), info: keyCheckInfo)
    }

    /// `StoreSubkeys(<redacted>)`: the keys are never shown.
    package var description: String { "StoreSubkeys(<redacted>)" }
    /// `StoreSubkeys(<redacted>)`: the keys are never shown, not even in debug output.
    package var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers cannot reach the keys.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    private static func hkdf(inputKey: Data, salt: Data, info: Data) throws -> Data {
        do {
            return try CryptoBackend.hkdfSHA256(
                inputKey: inputKey, salt: salt, info: info, outputByteCount: subkeyByteCount)
        } catch let failure as CryptoFailure {
            throw CacheError(.crypto, "cannot derive a store key: \(failure)", cause: failure)
        }
    }
}
