import CacheCore
import DiskCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the store lives, which master key opens it, and which clock decides expiry.
///
/// - The default store is `DiskCacheConfiguration(name: "strata")`'s default folder, opened with the
///   DiskCache default key file (`.defaultMasterKeyFile`).
/// - `--store DIR` opens DIR. Without `STRATA_MASTER_KEY`, its key file is
///   `<keys>/strata-stores/<last path component>-<16 hex digits>.key`, next to DiskCache's default key
///   files (`<keys>` is `DiskCacheLocation.keysFolder(environment:)`: `$XDG_DATA_HOME/strata/keys`,
///   `$HOME/.local/share/strata/keys`, or `Application Support/Strata/keys` on Apple platforms), where the hex digits are a
///   64-bit FNV-1a hash of DIR's absolute path with symbolic links resolved (a name, not a secret: a
///   collision would show up as a wrong-key error, never as silent sharing). Two different folders thus
///   get two keys, and the same folder, named through any path or link, always finds its key again.
///   When the key file is missing but the folder already holds a store, DiskCache refuses to create a
///   key that cannot open it (`masterKeyNotFound`, exit 3).
/// - `STRATA_MASTER_KEY` (base64 of 32 bytes) overrides either key file.
struct StoreLocation {
    /// The configuration to open the store with.
    var configuration: DiskCacheConfiguration
    /// The folder, as shown in messages.
    var displayPath: String

    /// Resolves the store from the global options and the environment.
    ///
    /// - Parameters:
    ///   - globals: The parsed global options.
    ///   - environment: The process environment.
    /// - Throws: `CLIFailure.store` for a malformed `STRATA_MASTER_KEY`, `CLIFailure.usage` for a malformed
    ///   `STRATA_CLOCK_OFFSET`.
    init(globals: GlobalOptions, environment: [String: String]) throws(CLIFailure) {
        var configuration = DiskCacheConfiguration(
            name: "strata", byteLimit: globals.maxBytes, countLimit: globals.maxEntries,
            clock: try Self.clock(environment: environment), observer: Self.reportTroubleOnStandardError)
        if let path = globals.storePath {
            let directory = Self.absoluteURL(forPath: path)
            configuration.directory = directory
            configuration.masterKeySource = .masterKeyFile(
                try Self.keyFileURL(forStore: directory, environment: environment))
            if Self.resolvedPath(directory.path)
                == Self.resolvedPath(DiskCacheConfiguration(name: "strata").resolvedDirectory.path)
            {
                // The default folder named explicitly is still the default store, with its key.
                configuration.masterKeySource = .defaultMasterKeyFile
            }
        }
        self.displayPath = configuration.resolvedDirectory.path
        // A missing key file beside an existing store is refused by DiskCache itself (masterKeyNotFound),
        // for the default store and `--store` alike; no key is created for it.
        if let encoded = environment["STRATA_MASTER_KEY"] {
            configuration.masterKeySource = .masterKey(try Self.masterKey(fromBase64: encoded, store: displayPath))
        }
        self.configuration = configuration
    }

    /// Opens the store.
    ///
    /// - Parameter applyingLimits: Whether the store gets this invocation's limits (and so is brought
    ///   within them at open); `false` opens it unlimited.
    /// - Returns: A store of `Data` values under `String` keys.
    /// - Throws: `CLIFailure.store` naming the store and the cause (wrong key, unreadable folder, …).
    func open(applyingLimits: Bool = true) throws(CLIFailure) -> DiskCache<String, Data> {
        var configuration = configuration
        if !applyingLimits {
            configuration.byteLimit = nil
            configuration.countLimit = nil
        }
        do {
            return try DiskCache(configuration: configuration, codec: .data)
        } catch {
            throw CLIFailure.store(error, store: displayPath, masterKeySource: masterKeySourceDescription)
        }
    }

    /// Keeps a warning for the events a user must hear about: a file that could not be read (left in
    /// place) and failed housekeeping. They are printed only when the command succeeds (see
    /// ``DeferredWarnings``). Corrupt entries removed are silent: they are misses by design, counted in
    /// `stats` and listed by `verify`.
    private static let reportTroubleOnStandardError: CacheObserver = { event in
        guard event.kind == .readFailed || event.kind == .maintenanceFailed || DeferredWarnings.isStoreReset(event)
        else { return }
        DeferredWarnings.add(event)
    }

    // MARK: - Key

    /// Where the key comes from, in words: `STRATA_MASTER_KEY`, `the default key file`, or `key file PATH`.
    var masterKeySourceDescription: String {
        switch configuration.masterKeySource {
        case .masterKey: return "STRATA_MASTER_KEY"
        case .defaultMasterKeyFile: return "the default key file"
        case .masterKeyFile(let url): return "key file \(url.path)"
        case .keychain(let service): return "the Keychain (service \(service))"
        @unknown default: return "the configured key"
        }
    }

    private static func masterKey(fromBase64 text: String, store: String) throws(CLIFailure) -> Data {
        let trimmed = String(text.trimmingWhitespace(newlines: true))
        guard let key = Data(base64Encoded: trimmed) else {
            throw .store("store \(store): STRATA_MASTER_KEY is not valid base64 (expected base64 of 32 random bytes)")
        }
        guard key.count == 32 else {
            throw .store(
                "store \(store): STRATA_MASTER_KEY decodes to \(key.count) bytes; a master key is exactly 32 bytes")
        }
        return key
    }

    /// The per-store key file for `--store DIR` when `STRATA_MASTER_KEY` is not set.
    static func keyFileURL(forStore directory: URL, environment: [String: String]) throws(CLIFailure) -> URL {
        let path = resolvedPath(directory.path)
        let hash = String(fnv1a64(Data(path.utf8)), radix: 16)
        let padded = String(repeating: "0", count: 16 - hash.count) + hash
        let name = URL(fileURLWithPath: path).lastPathComponent.map {
            $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_"
        }
        let prefix = String(String(name).prefix(64))
        let keys: URL
        do {
            keys = try DiskCacheLocation.keysFolder(environment: environment)
        } catch {
            throw CLIFailure.store(error, store: directory.path)
        }
        return keys.appendingPathComponent("strata-stores", isDirectory: true)
            .appendingPathComponent("\(prefix.isEmpty ? "store" : prefix)-\(padded).key")
    }

    /// 64-bit FNV-1a (Fowler–Noll–Vo): a stable, seedless hash used only to name key files.
    private static func fnv1a64(_ bytes: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `path` with every symbolic link resolved (`realpath(3)`), so that every path naming one folder
    /// gives one key file. For a folder that does not exist yet, its nearest existing ancestor is
    /// resolved and the rest appended.
    static func resolvedPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let parent = url.deletingLastPathComponent().path
        guard parent != url.path, !url.lastPathComponent.isEmpty else { return url.path }
        let resolvedParent = resolvedPath(parent)
        return (resolvedParent == "/" ? "" : resolvedParent) + "/" + url.lastPathComponent
    }

    /// `path` with a leading `~` or `~user` replaced by that home folder, as `NSString.expandingTildeInPath`
    /// does (`NSString` is Foundation proper, not FoundationEssentials); unchanged for an unknown user.
    static func expandingTilde(in path: String) -> String {
        #if !canImport(FoundationEssentials)
        // Apple platforms: Foundation's own (FileManager's home folders below are macOS-only there).
        return NSString(string: path).expandingTildeInPath
        #else
        guard path.hasPrefix("~") else { return path }
        let slash = path.firstIndex(of: "/") ?? path.endIndex
        let user = path[path.index(after: path.startIndex)..<slash]
        let home =
            user.isEmpty
            ? FileManager.default.homeDirectoryForCurrentUser : FileManager.default.homeDirectory(forUser: String(user))
        guard let home else { return path }
        let folder = home.path
        return (folder.hasSuffix("/") && slash < path.endIndex ? String(folder.dropLast()) : folder) + path[slash...]
        #endif
    }

    private static func absoluteURL(forPath path: String) -> URL {
        let expanded = expandingTilde(in: path)
        let base = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return URL(fileURLWithPath: expanded, isDirectory: true, relativeTo: base).absoluteURL.standardizedFileURL
    }

    // MARK: - Clock

    /// The system clock, shifted by the test-only `STRATA_CLOCK_OFFSET` (seconds, may be fractional or
    /// negative) so that tests can expire entries without waiting.
    private static func clock(environment: [String: String]) throws(CLIFailure) -> any CacheClock {
        guard let text = environment["STRATA_CLOCK_OFFSET"] else { return SystemClock() }
        guard let offset = Double(text.trimmingWhitespace()), offset.isFinite else {
            throw .usage("STRATA_CLOCK_OFFSET must be a number of seconds (it is a test-only setting)", command: nil)
        }
        return OffsetClock(offset: offset)
    }
}

/// The system wall clock plus a fixed offset in seconds (test-only `STRATA_CLOCK_OFFSET`).
struct OffsetClock: CacheClock {
    /// Seconds added to the system time.
    var offset: TimeInterval
    /// The system time plus ``offset``.
    var now: Date { Date().addingTimeInterval(offset) }
}
