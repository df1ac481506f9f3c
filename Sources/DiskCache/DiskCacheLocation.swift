import CacheCore
import CacheCrypto

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

/// Where Strata keeps its files when a caller names no folder: one rule for the store folders and the
/// master-key files, so the two can never come from two different homes.
///
/// - Apple platforms: `FileManager`'s caches folder for stores, and `Application Support/Strata/keys`
///   for key files (never purged, excluded from backups file by file).
/// - Elsewhere, per the XDG Base Directory specification: stores under `$XDG_CACHE_HOME`, else
///   `$HOME/.cache`; key files under `$XDG_DATA_HOME/strata/keys`, else `$HOME/.local/share/strata/keys`.
///   A relative `XDG_*` value is invalid and ignored. Only when `HOME` is unset or relative does the user
///   database's home folder stand in for it — for both folders alike.
///
/// ```swift
/// let stores = DiskCacheLocation.cachesFolder()    // ~/.cache on Linux
/// let keys = try DiskCacheLocation.keysFolder()    // ~/.local/share/strata/keys on Linux
/// ```
///
/// Thread safety: stateless; every member may be called from any thread. Each call reads the environment it
/// is given and, on Apple platforms, asks `FileManager` for a well-known folder; none touches a file.
public enum DiskCacheLocation {
    /// The per-user folder that holds cache stores: a store named `name` lives in
    /// `<cachesFolder>/Strata/<name>`.
    ///
    /// - Parameter environment: The variables to read (`XDG_CACHE_HOME`, `HOME`) outside Apple platforms;
    ///   the process environment by default.
    /// - Returns: The caches folder (it may not exist yet).
    public static func cachesFolder(
        environment: [String: String] = ProcessEnvironment.variables
    ) -> URL {
        #if canImport(Darwin)
        if let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first {
            return caches
        }
        return URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true).appendingPathComponent("Library/Caches")
        #else
        return MasterKeyLocation.xdgFolder("XDG_CACHE_HOME", orHome: ".cache", environment: environment)
            ?? FileManager.default.temporaryDirectory
        #endif
    }

    /// The per-user folder that holds default master-key files, outside the caches folder so that deleting
    /// caches never loses a key.
    ///
    /// - Parameter environment: The variables to read (`XDG_DATA_HOME`, `HOME`) outside Apple platforms; the
    ///   process environment by default.
    /// - Returns: The keys folder (it may not exist yet).
    /// - Throws: `CacheError` with code `.io` when no home folder can be found (no absolute `XDG_DATA_HOME`
    ///   or `HOME`, and no home in the user database), or, on Apple platforms, no Application Support folder.
    public static func keysFolder(
        environment: [String: String] = ProcessEnvironment.variables
    ) throws -> URL {
        try MasterKeyLocation.keysFolder(environment: environment)
    }
}
