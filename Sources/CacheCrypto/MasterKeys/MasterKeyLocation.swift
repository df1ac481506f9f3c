import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where default master-key files live: `<keysFolder>/<storeName>.key`, outside every cache folder so that
/// deleting caches never loses a key.
///
/// - Apple platforms: `Application Support/Strata/keys` (never purged; the loader excludes each file from
///   backups).
/// - Elsewhere, per the XDG Base Directory specification: `$XDG_DATA_HOME/strata/keys`, else
///   `$HOME/.local/share/strata/keys`. A relative `XDG_*` value is invalid and ignored. Only when `HOME` is
///   unset or relative does the user database's home folder stand in for it.
///
/// The XDG rule (``xdgFolder(_:orHome:environment:)``) is the one a tier also uses for its own per-user
/// folders (DiskCacheLocation's caches folder), so stores and their keys can never come from two homes.
///
/// Thread safety: stateless; reads only the environment it is given (and, on Apple platforms, asks
/// `FileManager` for a well-known folder); touches no file.
package enum MasterKeyLocation {
    /// `<storeName>.key`, after checking that the name is a single, valid file-name component.
    ///
    /// - Throws: `CacheError` `.invalidArgument` for an empty name, `.`, `..`, a name with `/` or NUL, or
    ///   one too long for a file name once `.key` is added (255 bytes in all).
    package static func fileName(forStoreName storeName: String) throws -> String {
        let fileName = storeName + ".key"
        guard !storeName.isEmpty, storeName != ".", storeName != "..", !storeName.contains("/"),
            !storeName.unicodeScalars.contains("\0"), fileName.utf8.count <= 255
        else {
            throw CacheError(
                .invalidArgument,
                "store name \"\(storeName)\" cannot name a key file: use 1 to 251 bytes without '/' or NUL, "
                    + "other than '.' and '..'")
        }
        return fileName
    }

    /// The per-user folder that holds default master-key files (it may not exist yet).
    ///
    /// - Parameter environment: The variables to read (`XDG_DATA_HOME`, `HOME`) outside Apple platforms.
    /// - Throws: `CacheError` `.io` when no home folder can be found (no absolute `XDG_DATA_HOME` or `HOME`,
    ///   and no home in the user database), or, on Apple platforms, no Application Support folder.
    package static func keysFolder(environment: [String: String]) throws -> URL {
        #if canImport(Darwin)
        guard
            let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        else {
            throw CacheError(.io, "cannot locate the Application Support folder for the default key file")
        }
        return support.appendingPathComponent("Strata/keys", isDirectory: true)
        #else
        return try xdgKeysFolder(environment: environment)
        #endif
    }

    /// The XDG rule for key files, compiled on every platform so that it is tested everywhere.
    package static func xdgKeysFolder(environment: [String: String]) throws -> URL {
        guard let data = xdgFolder("XDG_DATA_HOME", orHome: ".local/share", environment: environment) else {
            throw CacheError(
                .io,
                "cannot locate a home folder for the default key file; set XDG_DATA_HOME or HOME, "
                    + "or give the key file's path explicitly")
        }
        return data.appendingPathComponent("strata/keys", isDirectory: true)
    }

    /// `$variable` when it is absolute, else `<home>/<homeRelative>`; `nil` when there is no home either.
    package static func xdgFolder(
        _ variable: String, orHome homeRelative: String, environment: [String: String]
    ) -> URL? {
        if let value = environment[variable], value.hasPrefix("/") {
            return URL(fileURLWithPath: value, isDirectory: true)
        }
        guard let home = homeFolder(environment: environment) else { return nil }
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(homeRelative, isDirectory: true)
    }

    /// `$HOME` when absolute; otherwise the user database's home (an app's container on iOS, tvOS and
    /// watchOS, where `homeDirectoryForCurrentUser` does not exist).
    package static func homeFolder(environment: [String: String]) -> String? {
        if let home = environment["HOME"], home.hasPrefix("/") { return home }
        #if os(macOS) || os(Linux)
        let fallback = FileManager.default.homeDirectoryForCurrentUser.path
        #else
        let fallback = NSHomeDirectory()
        #endif
        return fallback.hasPrefix("/") ? fallback : nil
    }
}
