import CacheCore
import Foundation

/// Where default key files live on each platform; does no I/O beyond asking Foundation for well-known folders.
enum DefaultKeyLocation {
    /// The folder that holds default key files.
    ///
    /// - Parameter environment: The variables to read on Linux (`XDG_DATA_HOME`, `HOME`).
    /// - Throws: `CacheError` `.io` when no home folder can be found.
    static func keysFolder(environment: [String: String]) throws -> URL {
        #if canImport(Darwin)
        // Application Support is never purged, unlike Caches; that is where a key belongs. The key file itself
        // is excluded from backups (MasterKeyLoader), as the store it opens is not in them either.
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

    /// `$XDG_DATA_HOME/strata/keys`, or `$HOME/.local/share/strata/keys`, per the XDG Base Directory
    /// specification (a relative `XDG_DATA_HOME` is invalid and ignored).
    ///
    /// Compiled on every platform so that its rules are tested everywhere.
    ///
    /// - Throws: `CacheError` `.io` when neither variable gives an absolute path and the user database has
    ///   no home folder either.
    static func xdgKeysFolder(environment: [String: String]) throws -> URL {
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return URL(fileURLWithPath: dataHome, isDirectory: true).appendingPathComponent("strata/keys")
        }
        let home: String
        if let variable = environment["HOME"], variable.hasPrefix("/") {
            home = variable
        } else {
            #if os(macOS) || os(Linux)
            home = FileManager.default.homeDirectoryForCurrentUser.path
            #else
            // `homeDirectoryForCurrentUser` is macOS-only; an iOS, tvOS or watchOS app's home is its container.
            home = NSHomeDirectory()
            #endif
        }
        guard home.hasPrefix("/") else {
            throw CacheError(
                .io,
                "cannot locate a home folder for the default key file; set XDG_DATA_HOME or HOME, "
                    + "or give the key file's path explicitly")
        }
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share/strata/keys")
    }

    /// `<storeName>.key`, after checking that the name is a single, valid file-name component.
    ///
    /// - Throws: `CacheError` `.invalidArgument` for an empty name, `.`, `..`, a name with `/` or NUL, or
    ///   one too long for a file name once `.key` is added (255 bytes in all).
    static func fileName(forStoreName storeName: String) throws -> String {
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
}
