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

/// A failed system call, kept with its `errno` so callers can tell "absent" from "broken".
struct FileError: Error {
    var errno: Int32
    var operation: String
    var path: String
    /// Why, when `errno` does not say it (a foreign item: "a FIFO, not a regular file").
    var detail: String? = nil

    /// The error for a foreign item met where the store expects a regular file.
    static func notRegularFile(_ status: FileStatus, operation: String, path: String) -> FileError {
        FileError(errno: EINVAL, operation: operation, path: path, detail: "\(status.kind), not a regular file")
    }

    /// Whether the file or one of its folders does not exist.
    /// (Names are resolved one component at a time relative to a folder descriptor, so `ENOTDIR` means a
    /// foreign item where a folder belongs, not an absent one; see ``isForeignItem``.)
    var isNotFound: Bool { errno == ENOENT }

    /// Whether `error` is a `FileError` for an absent file or folder.
    static func isNotFound(_ error: any Error) -> Bool { (error as? FileError)?.isNotFound == true }

    /// The `errno` of `error` when it is a `FileError`.
    static func code(of error: any Error) -> Int32? { (error as? FileError)?.errno }

    /// The public error for this failure.
    var cacheError: CacheError {
        guard let detail else { return CacheError.posix(errno, operation, path: path) }
        // The detail alone: it already says what is wrong, and `path` says where.
        return CacheError(.io, detail, path: path)
    }
}
