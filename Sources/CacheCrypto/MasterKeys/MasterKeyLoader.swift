import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns a ``DiskCacheConfiguration/MasterKeySource`` into the store's ``MasterKey``.
///
/// - `.masterKey(Data)`: the caller's 32 bytes, validated.
/// - `.masterKeyFile(URL)`: the key file at that path, created on first use.
/// - `.defaultMasterKeyFile`: the key file at ``defaultMasterKeyFileURL(storeName:environment:)``, created on first use.
///   On Linux that is `$XDG_DATA_HOME/strata/keys/<storeName>.key`, or
///   `~/.local/share/strata/keys/<storeName>.key` when `XDG_DATA_HOME` is unset, empty or relative (as the
///   XDG Base Directory specification says). On Apple platforms it is
///   `~/Library/Application Support/Strata/keys/<storeName>.key`, excluded from backups and protected as the
///   tier asks (``MasterKeyFileProtection``). Both are outside the caches folder, so deleting or copying the
///   cache never touches the key.
/// - `.keychain(service:)`: a Keychain item (``KeychainMasterKeyStore``), created on first use.
///
/// After a restore to another device the cache starts empty: the caches folder is not in backups, and
/// neither is the key (the key file is excluded, the Keychain item is this-device-only).
///
/// A key file holds exactly 32 raw bytes, has mode 0600, and a folder this loader creates for it has mode
/// 0700. Creation is atomic across threads and processes: the key is written and flushed to a private
/// temporary file that is then hard-linked into place, which fails if another creator got there first, in
/// which case the winner's key is read and used. Everyone ends with one key, and nobody ever reads a
/// half-written key file. (On a file system without hard links the file is created with `O_EXCL` instead;
/// a racing reader could then see it empty for a moment and report `.invalidMasterKey`.)
///
/// Thread safety: stateless; calls from many threads or processes at once are safe.
package enum MasterKeyLoader {
    /// Returns the master key described by `source`, creating its key file on first use.
    ///
    /// Does file I/O for the two key-file sources.
    ///
    /// - Parameters:
    ///   - source: Where the key comes from.
    ///   - storeName: The store's name, used to name the default key file.
    /// - Returns: The master key.
    /// - Throws: `CacheError`
    ///   - `.invalidMasterKey`: a given key or key file is not 32 bytes, the key file is not a regular file,
    ///     it is open to group or others (the message names the path and the `chmod 600` fix), or it is a
    ///     symbolic link to a missing file (no key is created through a link; a link to an existing key
    ///     file is followed);
    ///   - `.invalidArgument`: `storeName` cannot be a file name (empty, `.`, `..`, contains `/` or NUL,
    ///     over 251 bytes) when the default key file is used;
    ///   - `.permissionDenied`, `.readOnly`, `.outOfSpace`, `.io`: the key file or its folder cannot be read
    ///     or created;
    ///   - `.crypto`: the random generator failed while creating a key.
    package static func load(_ source: MasterKeySource, storeName: String) throws -> MasterKey {
        try load(source, storeName: storeName, protection: nil, refusingCreation: nil).key
    }

    /// ``load(_:storeName:)`` for a tier: protects the key file as the tier asks, lets the tier refuse to
    /// create a key (a disk store that already exists without its key file), and says whether it created one.
    ///
    /// - Parameters:
    ///   - source: Where the key comes from.
    ///   - storeName: The store's name, used to name the default key file.
    ///   - protection: Runs on the key file's descriptor before the key is read or written; `nil` for none.
    ///   - refusingCreation: Called with the key file's path before a new key would be created; the error
    ///     it returns is thrown instead. `nil` always allows creation.
    /// - Returns: The master key, and the key file's path when this call created it (so that a store that
    ///   then fails to open can remove it again).
    /// - Throws: What ``load(_:storeName:)`` throws, and what `refusingCreation` returns.
    package static func load(
        _ source: MasterKeySource, storeName: String, protection: MasterKeyFileProtection?,
        refusingCreation: ((_ keyFilePath: String) -> CacheError?)?
    ) throws -> (key: MasterKey, createdKeyFile: String?) {
        switch source {
        case .masterKey(let bytes):
            return (try MasterKey(bytes: bytes), nil)
        case .masterKeyFile(let url):
            return try openOrCreateKeyFile(at: url, protection: protection, refusingCreation: refusingCreation)
        case .defaultMasterKeyFile:
            let url = try defaultMasterKeyFileURL(storeName: storeName)
            let loaded = try openOrCreateKeyFile(at: url, protection: protection, refusingCreation: refusingCreation)
            try excludeFromBackup(url)
            return loaded
        case .keychain(let service):
            return (try KeychainMasterKeyStore.loadOrCreate(service: service, account: storeName), nil)
        }
    }

    /// Marks the default key file as not to be backed up (Apple platforms; a no-op elsewhere), so that a
    /// backup never carries the key beside anything it could decrypt.
    ///
    /// - Throws: `CacheError` `.io` when the flag cannot be set.
    private static func excludeFromBackup(_ url: URL) throws {
        #if canImport(Darwin)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var file = url
        do {
            try file.setResourceValues(values)
        } catch {
            throw CacheError(.io, "cannot exclude the key file from backups", path: url.path, cause: error)
        }
        #endif
    }

    /// The default key file's location for a store named `storeName`; does no I/O.
    ///
    /// - Parameters:
    ///   - storeName: The store's name; it becomes the file name `<storeName>.key`.
    ///   - environment: The variables to read `XDG_DATA_HOME` and `HOME` from on Linux; tests pass their own
    ///     instead of changing the process environment.
    /// - Returns: The key file's URL (see the type's discussion for the rules).
    /// - Throws: `CacheError` `.invalidArgument` when `storeName` cannot be a file name; `.io` when no home
    ///   folder can be found.
    package static func defaultMasterKeyFileURL(
        storeName: String, environment: [String: String] = ProcessEnvironment.variables
    ) throws -> URL {
        try MasterKeyLocation.keysFolder(environment: environment)
            .appendingPathComponent(MasterKeyLocation.fileName(forStoreName: storeName), isDirectory: false)
    }

    /// Reads the key file at `url`, or creates it with a fresh random key if it does not exist.
    ///
    /// Does file I/O. See the type's discussion for the file's format, permissions and the creation race.
    ///
    /// - Parameter url: A file URL; missing folders on the way are created with mode 0700.
    /// - Returns: The key in the file, or the one just created (or created by a concurrent winner).
    /// - Throws: The same `CacheError`s as ``load(_:storeName:)``, and `.invalidArgument` when `url` is not a
    ///   file URL.
    package static func loadOrCreateKeyFile(at url: URL) throws -> MasterKey {
        try openOrCreateKeyFile(at: url, protection: nil, refusingCreation: nil).key
    }

    /// ``loadOrCreateKeyFile(at:)`` for a tier, which may refuse to create a key.
    ///
    /// - Parameters:
    ///   - url: A file URL; missing folders on the way are created with mode 0700.
    ///   - protection: Runs on the descriptor the key is read from or written to, never by path; `nil` for
    ///     none.
    ///   - refusingCreation: Called with the key file's path before a new key would be created; the error
    ///     it returns is thrown instead (a disk store that exists without its key file), unless the key file
    ///     is there when read once more: a concurrent creator of the store made it after the first read.
    /// - Returns: The key, and the key file's path when this call created it.
    /// - Throws: What ``loadOrCreateKeyFile(at:)`` throws, and what `refusingCreation` returns.
    package static func openOrCreateKeyFile(
        at url: URL, protection: MasterKeyFileProtection?, refusingCreation: ((_ keyFilePath: String) -> CacheError?)?
    ) throws -> (key: MasterKey, createdKeyFile: String?) {
        guard url.isFileURL else {
            throw CacheError(.invalidArgument, "the key file must be a file URL, got \(url.absoluteString)")
        }
        let path = url.standardizedFileURL.path
        // A creator that loses the race reads the winner's file; the retry covers that file being deleted in
        // between, which only a concurrent manual cleanup can cause.
        for _ in 0..<3 {
            if let existing = try MasterKeyFile.readKey(at: path, protection: protection) {
                return (existing, nil)
            }
            if let refusal = refusingCreation?(path) {
                // The refusal may be about a store another process created after the read above, with a key
                // file it linked before writing the store's record: seen that record, that file is there now.
                // Without this read every process but the creator could fail on a new store (a lost key).
                if let created = try MasterKeyFile.readKey(at: path, protection: protection) {
                    return (created, nil)
                }
                throw refusal
            }
            let key = try MasterKey.random()
            if try MasterKeyFile.createKey(at: path, containing: key, protection: protection) {
                return (key, path)
            }
        }
        throw CacheError(
            .io, "the key file keeps disappearing while it is being created; is something deleting it?",
            path: path)
    }
}
