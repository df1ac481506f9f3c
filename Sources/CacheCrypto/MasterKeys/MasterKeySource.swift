import CacheCore
import Foundation

/// Where a tier's 256-bit master key comes from. Subkeys for encryption and names are derived from it
/// with HKDF-SHA-256 (RFC 5869); the master key itself never encrypts anything.
///
/// ```swift
/// let configuration = DiskCacheConfiguration(name: "thumbnails", masterKeySource: .defaultMasterKeyFile)
/// ```
///
/// "The store's name" below is the name of whatever the key protects: a disk store's name, or a
/// namespace in a shared tier.
///
/// A plain value; thread-safe. The key is loaded (and a key file created) when a cache is opened with
/// it, not when the value is made.
public enum MasterKeySource: Sendable {
    /// A master key given by the caller: exactly 32 bytes, otherwise opening the cache throws
    /// `CacheError.Code.invalidMasterKey`.
    case masterKey(Data)
    /// The default key file for the store's name, `<name>.key`, outside any cache folder, created on
    /// first use with owner-only (0600) permissions: under Application Support (`Strata/keys`) on Apple
    /// platforms, `$XDG_DATA_HOME/strata/keys` or `~/.local/share/strata/keys` elsewhere. Stores with the
    /// same name share it.
    case defaultMasterKeyFile
    /// A key file at this file URL, created on first use with owner-only (0600) permissions. An existing
    /// file must be a regular file of 32 bytes that group and others cannot access, or opening the cache
    /// throws `CacheError.Code.invalidMasterKey`; a URL that is not a file URL makes it throw
    /// `CacheError.Code.invalidArgument`.
    case masterKeyFile(URL)
    /// A generic-password item in the Keychain (Apple platforms), created on first use with a fresh random
    /// master key: service `service`, account the store's name, readable after the first unlock following a
    /// restart, on this device only (never in a backup or restored elsewhere), not synchronised. The default
    /// on iOS, tvOS, watchOS and visionOS; on macOS it needs a signed app (the data-protection keychain).
    /// Elsewhere opening the cache throws `CacheError.Code.invalidArgument`.
    case keychain(service: String)

    /// The default for this platform: ``keychain(service:)`` with service `"Strata"` on iOS, tvOS,
    /// watchOS and visionOS; ``defaultMasterKeyFile`` on macOS (which also runs unsigned tools such as
    /// `strata`, which the data-protection keychain refuses) and Linux.
    public static var platformDefault: MasterKeySource {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return .keychain(service: "Strata")
        #else
        return .defaultMasterKeyFile
        #endif
    }
}

extension MasterKeySource {
    /// The key file that ``defaultMasterKeyFile`` names for a store called `storeName`, so that another
    /// tier can share that store's master key.
    ///
    /// ```swift
    /// // A Redis tier sealed under the key of the disk store named "thumbnails":
    /// let source = MasterKeySource.masterKeyFile(try MasterKeySource.defaultMasterKeyFileURL(forStoreNamed: "thumbnails"))
    /// ```
    ///
    /// Reads the environment (`XDG_DATA_HOME`, `HOME`) on Linux; touches no file. Thread-safe.
    ///
    /// - Parameter storeName: The store's name; the file is `<storeName>.key`.
    /// - Returns: The file URL, whether or not the file exists yet.
    /// - Throws: `CacheError` `.invalidArgument` when `storeName` cannot be a file name; `.io` when no home
    ///   folder can be found.
    public static func defaultMasterKeyFileURL(forStoreNamed storeName: String) throws -> URL {
        try MasterKeyLoader.defaultMasterKeyFileURL(storeName: storeName)
    }
}
