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

extension SQLiteError {
    /// The public error for this failure, naming the database file in `path`.
    ///
    /// | kind | `CacheError.Code` |
    /// |---|---|
    /// | full | `outOfSpace` |
    /// | readOnly | `readOnly` |
    /// | permissionDenied | `permissionDenied` (`protectedDataUnavailable` for `EPERM` on iOS-family systems) |
    /// | tooBig | `entryTooLarge` |
    /// | corrupt, busy, cannotOpen, io, constraint, sql, notRegularFile, inheritedAcrossFork, closed | `io` |
    ///
    /// A corrupt database reaches a caller only when the engine could not quarantine it; the engine handles
    /// every other corrupt case itself (Docs/DiskEngine-SQLite.md, "Errors").
    var cacheError: CacheError {
        let code: CacheError.Code
        switch kind {
        case .full: code = .outOfSpace
        case .readOnly: code = .readOnly
        case .permissionDenied:
            // The errno says whether this is Data Protection (iOS: EPERM before the first unlock), the same
            // reading as every other file error of the disk tier.
            code =
                systemErrno != 0
                ? CacheError.Code(
                    errno: systemErrno, permissionErrorMeansProtectedData: CacheError.permissionErrorMeansProtectedData)
                : .permissionDenied
        case .tooBig: code = .entryTooLarge
        case .corrupt, .busy, .cannotOpen, .io, .constraint, .sql, .notRegularFile, .inheritedAcrossFork, .closed:
            code = .io
        }
        let cause: (any Error)? = systemErrno != 0 ? POSIXErrorCode(rawValue: systemErrno).map { POSIXError($0) } : nil
        return CacheError(code, "cannot \(operation) SQLite database: \(detail)", path: path, cause: cause ?? self)
    }

    /// The error as the disk tier's file-level error, for code that already handles `FileError` (the
    /// quarantine of a foreign item, the `errno`-based reports): the `errno` behind it; without one, the
    /// `errno` that stands for the kind (`ENOSPC`, `EROFS`, `EACCES`), or `EINVAL` with the detail.
    var fileError: FileError {
        let operation = "cannot \(operation) SQLite database"
        if systemErrno != 0 { return FileError(errno: systemErrno, operation: operation, path: path) }
        switch kind {
        case .full: return FileError(errno: ENOSPC, operation: operation, path: path)
        case .readOnly: return FileError(errno: EROFS, operation: operation, path: path)
        case .permissionDenied: return FileError(errno: EACCES, operation: operation, path: path)
        default: return FileError(errno: EINVAL, operation: operation, path: path, detail: detail)
        }
    }
}
