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

/// The store's folders, held open by descriptor so that every operation resolves names relative to them
/// (Directory.swift): the store folder itself, `entries/` and `tmp/`.
///
/// Held rather than opened per operation: resolving `<store>/entries/<xx>/<name>` from the path on each
/// read cost more than the two `openat` calls below a held folder. A store deleted or replaced from
/// outside is noticed by the operation that meets a missing name (`ENOENT` on `store.check`, or on a
/// folder whose link count fell to 0), which opens the folders again (DiskStore+Folders.swift).
///
/// `Sendable`: immutable references to `Sendable` directories.
final class StoreFolders: Sendable {
    let root: Directory
    let entries: Directory
    let temporary: Directory

    init(root: Directory, entries: Directory, temporary: Directory) {
        self.root = root
        self.entries = entries
        self.temporary = temporary
    }

    /// Whether `directory` was deleted (its link count is 0): names can no longer be created in it.
    static func isDeleted(_ directory: Directory) -> Bool {
        var info = stat()
        return fstat(directory.descriptor, &info) == 0 && info.st_nlink == 0
    }
}
