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

// Values sealed larger than the row limit: each in a file of its own under `large/`, named by its row's
// name and 64 random bits, bound to both by the associated data. The file is written in `tmp/` and renamed
// into place before the row that names it commits; a replaced or removed row's file is unlinked only after
// that row's deletion commits. A crash between the two leaves a file no row names: an orphan, swept by
// `verify()` once it is old enough that no writer can still be committing it.
extension SQLiteEngine {
    /// How old an orphan large-value file must be before a sweep deletes it: a writer commits its row well
    /// within this of renaming the file into place.
    static let orphanAge: TimeInterval = 60

    /// Seals a large value into a new file with `fill`, then commits its row.
    ///
    /// - Returns: The replaced row's file, to unlink.
    func writeLarge(
        name: String, removable: Int64?, now: Date,
        fill: (_ epoch: Epoch, _ file: String, _ fd: Int32, _ path: String) throws -> Void
    ) throws -> String? {
        try translatingErrors {
            var epoch = currentEpoch
            for _ in 0..<3 {
                // The file goes into `large/` of the store at the path, made again first if it was deleted.
                try followDatabase(recreating: true)
                let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
                let file = name + "-" + String(repeating: "0", count: 16 - random.count) + random
                let sealedEpoch = epoch
                try files.write(
                    in: folders.large, name: file, temporaryFolder: folders.temporary, modified: nil, replacing: false,
                    placing: { try $0() }, clearingDirectory: { _, _ in false },
                    fill: { fd, path in try fill(sealedEpoch, file, fd, path) })
                var committed = false
                defer { if !committed { try? folders.large.unlink(file) } }
                let size = try folders.large.status(file)?.size ?? 0
                let outcome = try write(recreating: true) { connection -> String?? in
                    // Another process started a new epoch since the file was sealed: seal again under it.
                    guard try adoptEpoch(from: connection).id == sealedEpoch.id else { return nil }
                    return .some(
                        try upsert(
                            name: name, removable: removable, now: now, sealed: nil, file: file, size: size,
                            on: connection))
                }
                guard let replaced = outcome else {
                    epoch = try read { try adoptEpoch(from: $0) }
                    continue
                }
                committed = true
                return replaced
            }
            throw CacheError(
                .io, "the store's key epoch kept changing while a large value was written", path: largeFolderPath)
        }
    }

    /// The largest sealed record this store writes: its byte limit, or the format's bound.
    var maxRecordSize: Int { min(configuration.byteLimit ?? .max, DiskCacheConfiguration.largestEntrySize) }

    /// Unlinks the large-value file `name` from `large/`, if it has a large-value file's form and belongs to
    /// the row `row` (starts with its name): a name read from a row (which anyone with write access to the folder
    /// can edit) never reaches another path, nor another row's file. `row` `nil` only for a sweep of files no
    /// row names.
    func unlinkLargeFile(_ name: String?, of row: String?) {
        guard let name, Self.isLargeFileName(name), row.map({ name.hasPrefix($0 + "-") }) ?? true else { return }
        try? folders.large.unlink(name)
    }

    /// Reads the sealed record of a row whose value is in a file: the file must be a regular file, in
    /// `large/`, with a name of the right form and the row's size. Anything else leaves the row without a
    /// sealed record (so it is corrupt); a file that cannot be read for a passing reason throws.
    func readLargeFile(_ row: inout SQLiteEntryRow) throws {
        guard let file = row.file, Self.isLargeFileName(file), file.hasPrefix(row.name) else { return }
        let opened: Result<Int32, FileError> = Result { () throws(FileError) in
            try folders.large.openFile(file, O_RDONLY)
        }
        if case .failure(let error) = opened, error.isNotFound || error.isForeignItem { return }
        let fd = try opened.get()
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: largeFolderPath + "/" + file)
        // Nothing is allocated from an untrusted size: no file larger than any entry this store writes.
        guard status.isRegularFile, status.size == row.size, status.size <= maxRecordSize else { return }
        let (bytes, count) = try FileSystem.readContents(fd, status: status, path: largeFolderPath + "/" + file)
        row.sealed = bytes
        row.sealedCount = count
    }
}
