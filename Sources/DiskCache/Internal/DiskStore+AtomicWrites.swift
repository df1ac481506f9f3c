import CacheCore
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Atomic file writing: a temporary file in `tmp/`, renamed or linked into place, and the clean-up of
// temporary files that crashed writers left behind.
extension DiskStore {
    /// Writes `data` to a fresh temporary file in `tmp/`, then renames it to `name` in `folder`
    /// (`replacing`) or links it there only if nothing has that name yet. With `.fsync` durability the
    /// file is synced before and its folder after. `modified` is set once the file is in place, so a
    /// temporary file's modification time is always the real time of its last write (see
    /// `removeStaleTemporaryFiles`).
    ///
    /// - Throws: `FileError`; a not-found error means the store folder is gone.
    func writeAtomically(_ data: Data, in folder: Directory, name: String, modified: Date?, replacing: Bool) throws {
        try writeAtomically(in: folder, name: name, modified: modified, replacing: replacing) { fd, path in
            try data.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: path) }
        }
    }

    /// ``writeAtomically(_:in:name:modified:replacing:)`` for a file whose bytes `fill` writes to the
    /// temporary file's descriptor (in one piece or streamed).
    /// `commit`, when given, runs right after the file is in place, under the name's stripe: the index
    /// update that must not be separated from the rename.
    func writeAtomically(
        in folder: Directory, name: String, modified: Date?, replacing: Bool,
        commit: (() -> Void)? = nil,
        fill: (_ fd: Int32, _ path: String) throws -> Void
    ) throws {
        let durable = configuration.durability == .fsync
        let temporaryFolder = try folders().temporary
        let (temporary, fd) = try createTemporaryFile(in: temporaryFolder)
        defer { FileSystem.closeFile(fd) }
        var placed = false
        defer { if !placed { try? temporaryFolder.unlink(temporary) } }
        try fill(fd, layout.temporaryFolder + "/" + temporary)
        if durable { try FileSystem.syncFile(fd, path: layout.temporaryFolder + "/" + temporary) }
        if let commit {
            try withNameLock(name) {
                try place(temporary, from: temporaryFolder, in: folder, name: name, replacing: replacing)
                commit()
            }
        } else {
            try place(temporary, from: temporaryFolder, in: folder, name: name, replacing: replacing)
        }
        placed = true
        // The kernel stamped the file with the real time of this write; it is reset only when the store's
        // clock is a recency step away from the real one (an injected or skewed clock), which saves a
        // system call per write in the usual case. Recency is advisory: a failure leaves the write time.
        if let modified, abs(modified.timeIntervalSinceNow) >= Self.recencyResolution {
            try? FileSystem.setTimes(fd, to: modified, path: name)
        }
        if durable { try folder.sync() }
    }

    /// Creates a fresh temporary file in `tmp/`, exclusively (`O_EXCL`, which also refuses a link).
    private func createTemporaryFile(in folder: Directory) throws -> (name: String, fd: Int32) {
        while true {
            let sequence = state.withLock { state in
                state.temporarySequence &+= 1
                return state.temporarySequence
            }
            let temporary = layout.temporaryFile(sequence: sequence)
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
        _ temporary: String, from source: Directory, in folder: Directory, name: String, replacing: Bool
    )
        throws
    {
        if replacing {
            do {
                try source.rename(temporary, to: folder, as: name)
            } catch {
                // rename(2) replaces only a file: move a foreign directory in the way aside, then retry.
                guard !error.isNotFound, try quarantineIfDirectory(name, in: folder) else { throw error }
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

    /// Removes `name` in `folder` only if it is still the file described by `status` (a concurrent
    /// writer may have renamed a good entry over it since it was read).
    @discardableResult
    func removeIfUnchanged(_ name: String, in folder: Directory, status: FileStatus) -> Bool {
        guard let current = try? folder.status(name), current.isSameFile(as: status) else { return false }
        return (try? folder.unlink(name)) != nil
    }

    /// Removes temporary files not written to for ``staleTemporaryFileAge`` by the real clock: a live
    /// writer finishes its temporary file in well under a minute, so only a crashed writer's files are
    /// that old. (Entry times follow the injected clock; temporary files are never re-stamped.)
    /// A younger file goes too when the process named by its `<pid>-` prefix no longer exists on this
    /// host, so a store reopened right after a crash holds no leftovers (Docs/Reliability.md, scenario 1).
    ///
    /// Only regular files whose names have the form of Strata's own temporary files are removed
    /// (`StoreLayout.isTemporaryName`); anything else in `tmp/` is left alone. `tmp/` is opened without
    /// following a link (a link there was moved aside when the folders were opened).
    func removeStaleTemporaryFiles() {
        guard let folder = try? folders().temporary else { return }
        let cutoff = Date().addingTimeInterval(-Self.staleTemporaryFileAge)
        var stale: [String] = []
        try? folder.forEach { name, status in
            guard status.isRegularFile, StoreLayout.isTemporaryName(name),
                status.modificationDate < cutoff || Self.writerIsGone(temporaryFileName: name)
            else { return }
            stale.append(name)
        }
        var removed = 0
        for name in stale where (try? folder.unlink(name)) != nil { removed += 1 }
        if removed > 0 {
            report(
                .staleFilesRemoved, "removed \(removed) temporary file(s) left by an interrupted write",
                path: layout.temporaryFolder)
        }
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
