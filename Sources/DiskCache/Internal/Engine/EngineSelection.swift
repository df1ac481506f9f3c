import CacheCore

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

/// Which engine opens a store: the one recorded in its folder, never one guessed from an option
/// (Docs/DiskCache.md, "Engines").
enum EngineSelection {
    /// What a store folder's key-check record says about its engine.
    enum Recorded: Equatable {
        /// No record: a new store (or none yet).
        case none
        /// Version 1: the file engine.
        case files
        /// Something that cannot be read as a record (a link, a FIFO, a folder, a short file): the engine
        /// asked for opens and reports the damage. Under `.automatic` that is the file engine, not the new-store
        /// default: the folder holds a store whose engine is unknown, and choosing one must not look like
        /// creating a new store.
        case unreadable
        /// Version 2: the SQLite engine.
        case sqlite
    }

    /// Opens the engine for `configuration`.
    ///
    /// - Throws: `.unsupportedFormat` when the configuration asks for one engine and the folder holds a store
    ///   of the other; what the engine's opening throws.
    static func openEngine(_ configuration: DiskCacheConfiguration) throws -> any StorageEngine {
        try openEngine(configuration, recorded: recordedEngine(in: StoreLayout(root: configuration.resolvedDirectory)))
    }

    /// Opens the engine for `configuration` in a folder whose record said `recorded` when it was looked at.
    ///
    /// Under `.automatic` a file store may be migrated between that look and the file engine's own read of the
    /// record (another process's `migrateStoreToSQLite()` committing): the record then says SQLite, and the
    /// SQLite engine opens instead of the open failing.
    static func openEngine(_ configuration: DiskCacheConfiguration, recorded: Recorded) throws -> any StorageEngine {
        switch (configuration.engine, recorded) {
        case (.automatic, .files):
            do {
                return try FileEngine(configuration: configuration)
            } catch let error as CacheError where error.code == .unsupportedFormat {
                let layout = StoreLayout(root: configuration.resolvedDirectory)
                guard recordedEngine(in: layout) == .sqlite else { throw error }
                return try SQLiteEngine(configuration: configuration)
            }
        case (.files, .none), (.files, .files), (.files, .unreadable), (.automatic, .unreadable):
            return try FileEngine(configuration: configuration)
        case (.sqlite, .none), (.sqlite, .sqlite), (.automatic, .none), (.automatic, .sqlite), (.sqlite, .unreadable):
            return try SQLiteEngine(configuration: configuration)
        case (.files, .sqlite):
            throw mismatch(configuration, recorded: "the SQLite engine", asked: "files")
        case (.sqlite, .files):
            throw mismatch(configuration, recorded: "the file engine", asked: "sqlite")
        }
    }

    private static func mismatch(_ configuration: DiskCacheConfiguration, recorded: String, asked: String) -> CacheError
    {
        CacheError(
            .unsupportedFormat,
            "store '\(configuration.name)' was created with \(recorded), but the configuration asks for "
                + "Engine.\(asked); open it with Engine.automatic, or migrate it",
            path: configuration.resolvedDirectory.path)
    }

    /// Reads the version byte of `store.check` without following a link or blocking; anything but a readable
    /// regular file with version 2 there is left to the file engine, which reports a damaged record.
    static func recordedEngine(in layout: StoreLayout) -> Recorded {
        let fd = open(layout.checkRecord, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .none : .unreadable }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return .unreadable }
        var prefix = [UInt8](repeating: 0, count: 5)
        guard pread(fd, &prefix, 5, 0) == 5 else { return .unreadable }
        switch prefix[4] {
        case KeyCheckRecord.version: return .files
        case KeyCheckRecord.sqliteVersion: return .sqlite
        default: return .unreadable
        }
    }
}
