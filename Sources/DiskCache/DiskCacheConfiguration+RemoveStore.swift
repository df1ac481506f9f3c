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

extension DiskCacheConfiguration {
    /// Deletes the store this configuration names, with every entry in it: the recovery for a store that
    /// can no longer be opened because its master key is lost (``CacheError/Code/masterKeyNotFound``) or
    /// another key is configured (``CacheError/Code/wrongMasterKey``). A cache's contents are disposable; this
    /// makes discarding them one explicit call, while opening a store never deletes anything by itself.
    ///
    /// ```swift
    /// let configuration = DiskCacheConfiguration(name: "images")
    /// let images: DiskCache<String, Data>
    /// do {
    ///     images = try DiskCache(configuration: configuration)
    /// } catch let error as CacheError where error.code == .masterKeyNotFound || error.code == .wrongMasterKey {
    ///     try configuration.removeStore()   // the old entries cannot be read anyway
    ///     images = try DiskCache(configuration: configuration)
    /// }
    /// ```
    ///
    /// The folder (``resolvedDirectory``; a symbolic link there is resolved, as when the store opens) is
    /// first renamed to a hidden name beside it, so no process opens a half-deleted store, then deleted
    /// without following any symbolic link inside it. The master key is left as it is. Close every
    /// `DiskCache` on the store first: one still open goes on writing into the renamed folder until it is
    /// gone.
    ///
    /// - Throws: `CacheError` with code `.invalidArgument` when the folder exists but holds no Strata store
    ///   (no `store.check`): nothing is deleted, so a wrong path cannot wipe an unrelated folder; `.io`,
    ///   `.permissionDenied` or `.readOnly` when it cannot be renamed or deleted (the rename is undone
    ///   where it can be). A folder that does not exist is not an error.
    /// - Complexity: O(*n*) in the number of files in the store; does file I/O.
    public func removeStore() throws {
        let folder = resolvedDirectory.resolvingSymlinksInPath()
        var status = stat()
        guard lstat(folder.path, &status) == 0 else { return }
        guard StoreLayout(root: folder).holdsStore else {
            throw CacheError(
                .invalidArgument,
                "\(folder.path) holds no Strata store (no store.check); nothing was deleted", path: folder.path)
        }
        let doomed = folder.deletingLastPathComponent()
            .appendingPathComponent(".\(folder.lastPathComponent).removing-\(UInt64.random(in: 1...UInt64.max))")
        guard rename(folder.path, doomed.path) == 0 else {
            throw CacheError.posix(errno, "cannot move the store aside to remove it", path: folder.path)
        }
        do {
            // FileManager removes a symbolic link inside the tree as a link; it never descends into one.
            try FileManager.default.removeItem(at: doomed)
        } catch {
            throw CacheError(.io, "the store was moved aside but not fully deleted", path: doomed.path, cause: error)
        }
    }
}
