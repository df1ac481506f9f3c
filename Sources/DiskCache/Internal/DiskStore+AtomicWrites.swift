import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Wiring the atomic file writer (AtomicFileWriter.swift) to the store: its folders, the name stripes that
// keep a rename and its index update together, and the quarantine for a foreign directory in the way.
extension DiskStore {
    /// Writes `data` atomically to `name` in `folder` (see ``AtomicFileWriter``).
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
        try writer.write(
            in: folder, name: name, temporaryFolder: try folders().temporary, modified: modified,
            replacing: replacing,
            placing: { place in
                guard let commit else { return try place() }
                try withNameLock(name) {
                    try place()
                    commit()
                }
            },
            clearingDirectory: quarantineIfDirectory, fill: fill)
    }

    /// Removes `name` in `folder` only if it is still the file described by `status`, unchanged (a
    /// concurrent writer may have renamed a good entry over it since it was read, and that entry's file
    /// may even carry the inode number of the one read, freed in between; a reader's recency update also
    /// counts as a change, and leaves the file for the next sweep).
    @discardableResult
    func removeIfUnchanged(_ name: String, in folder: Directory, status: FileStatus) -> Bool {
        guard let current = try? folder.status(name), current.isUnchangedFile(since: status) else { return false }
        return (try? folder.unlink(name)) != nil
    }

    /// Removes the temporary files crashed writers left in `tmp/` (``AtomicFileWriter/removeStaleFiles(in:)``)
    /// and reports them. `tmp/` is opened without following a link (a link there was moved aside when the
    /// folders were opened).
    func removeStaleTemporaryFiles() {
        guard let folder = try? folders().temporary else { return }
        let removed = writer.removeStaleFiles(in: folder)
        if removed > 0 {
            report(
                .staleFilesRemoved, "removed \(removed) temporary file(s) left by an interrupted write",
                path: layout.temporaryFolder)
        }
    }
}
