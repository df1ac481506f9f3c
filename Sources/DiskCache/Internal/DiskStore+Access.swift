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

// A store the process cannot modify (a read-only mount, a folder owned by someone else) still serves
// reads: opening falls back to a read-only mode instead of failing, and every operation that would
// change the store throws one clear `readOnly` error instead of a raw system-call failure.
extension DiskStore {
    /// Creates the folders and the store lock file, or, when the file system refuses (`EROFS`,
    /// `EACCES`, `EPERM`) and the store already exists, enters read-only mode.
    ///
    /// - Throws: The creation error when the store does not exist yet (there is nothing to read), or when
    ///   the failure is of another kind (a full disk, an I/O error).
    func openFolders() throws {
        do {
            // Creates the folders and gives them their Data Protection class through their descriptors.
            try createFolders()
        } catch let error as FileError where Self.isWriteRefusal(error.errno) {
            // Reading needs the key-check record; without one there is no store to read.
            let existing = try? openStoreFolders(creating: false)
            guard (try? existing?.root.status(StoreLayout.checkRecordName)) ?? nil != nil else { throw error }
            state.withLock { $0.readOnlyCause = error }
        }
    }

    /// Whether `code` means "this process may not change the file system here" rather than a failure.
    static func isWriteRefusal(_ code: Int32) -> Bool {
        code == EROFS || code == EACCES || (code == EPERM && !CacheError.permissionErrorMeansProtectedData)
    }

    /// Whether the store was opened in read-only mode.
    var isReadOnly: Bool { state.withLock { $0.readOnlyCause != nil } }

    /// Throws the read-only error when the store was opened in read-only mode; call before any change.
    ///
    /// - Parameter operation: What was refused, for the message (for example "store an entry").
    /// - Throws: `CacheError` `.readOnly` naming the store, its folder and the reason.
    func requireWritable(_ operation: String) throws {
        guard let cause = state.withLock({ $0.readOnlyCause }) else { return }
        let reason = cause.errno == EROFS ? "it is on a read-only file system" : "this process may not modify it"
        throw CacheError(
            .readOnly,
            "cannot \(operation) in store '\(storeName)': \(reason), so it was opened read-only; reads still "
                + "work. Nothing was changed",
            path: layout.root, cause: cause.cacheError)
    }
}
