import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Atomic file writing: a fresh temporary file in `tmp/`, filled, synced, then renamed or linked into
/// place, its folder synced; and the clean-up of temporary files that crashed writers left behind.
///
/// Knows nothing of entries, keys or the index: the store passes what must happen with the name's
/// stripe held (`placing`) and how to clear a foreign directory in the way (`clearingDirectory`).
///
/// Thread safety: the only mutable state is the temporary-file sequence, behind its own lock, taken
/// alone and never around I/O.
final class AtomicFileWriter: Sendable {
    /// Temporary files older than this (by the kernel's change time) are leftovers of a crashed writer.
    static let staleTemporaryFileAge: TimeInterval = 60

    let layout: StoreLayout
    /// Whether files are synced before and folders after they are placed (`.fsync` durability).
    let isDurable: Bool
    /// How far a requested modification time may stand from the kernel's stamp before it is set.
    let recencyResolution: TimeInterval
    /// Numbers this store's temporary files (see `StoreLayout.temporaryFile(sequence:)`).
    private let sequence = Locked<UInt64>(0)

    init(layout: StoreLayout, isDurable: Bool, recencyResolution: TimeInterval) {
        self.layout = layout
        self.isDurable = isDurable
        self.recencyResolution = recencyResolution
    }

    /// Writes a fresh temporary file in `temporaryFolder` whose bytes `fill` writes to its descriptor (in
    /// one piece or streamed), then renames it to `name` in `folder` (`replacing`) or links it there only
    /// if nothing has that name yet. With durability the file is synced before and its folder after.
    /// `modified` is set once the file is in place, so a temporary file's modification time is always the
    /// real time of its last write (see ``removeStaleFiles(in:)``).
    ///
    /// - Parameters:
    ///   - placing: Runs the move into place it is given; the store wraps it in the name's stripe and the
    ///     index update that must not be separated from the rename.
    ///   - clearingDirectory: Moves a directory at a name aside; `true` when the name is free now.
    /// - Throws: `FileError`; a not-found error means the store folder is gone.
    func write(
        in folder: Directory, name: String, temporaryFolder: Directory, modified: Date?, replacing: Bool,
        placing: (_ place: () throws -> Void) throws -> Void,
        clearingDirectory: (_ name: String, _ folder: Directory) throws -> Bool,
        fill: (_ fd: Int32, _ path: String) throws -> Void
    ) throws {
        let (temporary, fd) = try createTemporaryFile(in: temporaryFolder)
        defer { FileSystem.closeFile(fd) }
        var placed = false
        defer { if !placed { try? temporaryFolder.unlink(temporary) } }
        let temporaryPath = layout.temporaryFolder + "/" + temporary
        try fill(fd, temporaryPath)
        if isDurable { try FileSystem.syncFile(fd, path: temporaryPath) }
        // Both closures are the caller's and run before this call returns; nothing keeps them.
        try withoutActuallyEscaping(clearingDirectory) { clearingDirectory in
            try placing {
                try place(
                    temporary, from: temporaryFolder, in: folder, name: name, replacing: replacing,
                    clearingDirectory: clearingDirectory)
            }
        }
        placed = true
        // The kernel stamped the file with the real time of this write; it is reset only when the store's
        // clock is a recency step away from the real one (an injected or skewed clock), which saves a
        // system call per write in the usual case. Recency is advisory: a failure leaves the write time.
        if let modified, abs(modified.timeIntervalSinceNow) >= recencyResolution {
            try? FileSystem.setTimes(fd, to: modified, path: name)
        }
        if isDurable { try folder.sync() }
    }

    /// Creates a fresh temporary file in `tmp/`, exclusively (`O_EXCL`, which also refuses a link).
    private func createTemporaryFile(in folder: Directory) throws -> (name: String, fd: Int32) {
        while true {
            let next = sequence.withLock { sequence in
                sequence &+= 1
                return sequence
            }
            let temporary = layout.temporaryFile(sequence: next)
            do {
                return (temporary, try folder.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL))
            } catch  where error.errno == EEXIST {
                // Left by an earlier process with the same pid and random bits; take the next number.
            } catch {
                throw error
            }
        }
    }

    private func place(
        _ temporary: String, from source: Directory, in folder: Directory, name: String, replacing: Bool,
        clearingDirectory: (String, Directory) throws -> Bool
    ) throws {
        if replacing {
            do {
                try source.rename(temporary, to: folder, as: name)
            } catch {
                // rename(2) replaces only a file: move a foreign directory in the way aside, then retry.
                guard !error.isNotFound, try clearingDirectory(name, folder) else { throw error }
                try source.rename(temporary, to: folder, as: name)
            }
        } else {
            do {
                try source.link(temporary, to: folder, as: name)
            } catch  where error.errno == EEXIST {
                // Another process created it first; its record wins.
            } catch {
                throw error
            }
            try source.unlink(temporary)
        }
    }

    /// Removes temporary files not written to for ``staleTemporaryFileAge`` by the real clock: a live
    /// writer finishes its temporary file in well under a minute, so only a crashed writer's files are
    /// that old. (Entry times follow the injected clock; temporary files are never re-stamped.)
    /// A younger file goes too when the process named by its `<pid>-` prefix no longer exists on this
    /// host, so a store reopened right after a crash holds no leftovers (Docs/Reliability.md, scenario 1).
    ///
    /// Only regular files whose names have the form of Strata's own temporary files are removed
    /// (`StoreLayout.isTemporaryName`); anything else in `tmp/` is left alone.
    ///
    /// - Returns: How many files were removed.
    func removeStaleFiles(in folder: Directory) -> Int {
        let cutoff = Date().addingTimeInterval(-Self.staleTemporaryFileAge)
        var stale: [String] = []
        try? folder.forEach { name, status in
            guard status.isRegularFile, StoreLayout.isTemporaryName(name),
                status.modificationDate < cutoff || Self.writerIsGone(temporaryFileName: name)
            else { return }
            stale.append(name)
        }
        return stale.filter { (try? folder.unlink($0)) != nil }.count
    }

    /// Whether the process that made a temporary file is known to have ended: its name starts with the
    /// writer's pid and `kill(pid, 0)` says no such process. Any doubt (another name, a pid that exists
    /// or belongs to someone else) keeps the file for the age rule. Another pid namespace sharing the
    /// folder could look gone; its write would then fail with an error, never leave a wrong entry.
    static func writerIsGone(temporaryFileName name: String) -> Bool {
        guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]), pid > 0, pid != getpid() else {
            return false
        }
        return kill(pid, 0) == -1 && errno == ESRCH
    }
}
