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

/// A failure that ends the tool with a one-line message on stderr and a documented exit status.
///
/// Every error raised anywhere in the tool is turned into one of these at the top level, so no path
/// ends in a crash or a stack trace.
enum CLIFailure: Error {
    /// The command line is wrong; the message is followed by the usage of `command` (or the general
    /// usage when `nil`). Exit status 2.
    case usage(String, command: String?)
    /// A setting outside the command line proper is malformed (a bad `--redis` or `STRATA_REDIS_URL`), or
    /// one word of it is (an unknown shell for `completion`); the message is one line, without the usage.
    /// Exit status 2.
    case badSetting(String)
    /// The store or its key cannot be used. The message names the store and the cause. Exit status 3.
    case store(String)
    /// `exec` could not start the command. Exit status 126 or 127.
    case launch(String, status: Int32)
    /// Standard output was closed by its reader (`EPIPE`, as in `strata get KEY | head -c 10`): the process
    /// ends quietly with 141 (128 + `SIGPIPE`), as `cat` and `exec` do in a shell pipeline.
    case outputClosed

    /// The failure for a write to stdout that did not complete: ``outputClosed`` for `EPIPE`, otherwise a
    /// store-class failure naming the cause.
    ///
    /// - Parameter code: The `errno` of the failed write.
    /// - Returns: The failure to throw.
    static func outputWriteFailed(errno code: Int32) -> CLIFailure {
        code == EPIPE ? .outputClosed : .store("cannot write to standard output: \(String(cString: strerror(code)))")
    }

    /// The exit status this failure ends the process with.
    var exitStatus: Int32 {
        switch self {
        case .usage, .badSetting: return ExitStatus.usage
        case .store: return ExitStatus.storeFailure
        case .launch(_, let status): return status
        case .outputClosed: return ExitStatus.outputClosed
        }
    }

    /// Wraps any error thrown by the store in a one-line message that names the store.
    ///
    /// - Parameters:
    ///   - error: What the store (or the file system under it) threw.
    ///   - store: The store's folder, shown to the user.
    ///   - masterKeySource: Where the master key came from (`STRATA_MASTER_KEY`, a key file path), for key errors.
    /// - Returns: A `.store` failure whose message says where and why.
    static func store(_ error: any Error, store: String, masterKeySource: String? = nil) -> CLIFailure {
        if let failure = error as? CLIFailure { return failure }
        guard let cacheError = error as? CacheError else {
            return .store("store \(store): \(oneLine(String(describing: error)))")
        }
        let cause: String
        switch cacheError.code {
        case .wrongMasterKey:
            let source = masterKeySource.map { "the key from \($0)" } ?? "this key"
            cause = "the store was created with a different master key than \(source); nothing was changed"
        case .masterKeyNotFound:
            let keyFile = cacheError.path ?? "its key file"
            cause =
                "no key file for this store at \(keyFile); set STRATA_MASTER_KEY to the key it was created with, "
                + "or remove the store's folder to start empty"
        case .invalidMasterKey:
            cause = "the master key\(masterKeySource.map { " from \($0)" } ?? "") is unusable: \(cacheError.message)"
        case .permissionDenied:
            cause = "permission denied: \(cacheError.message)\(naming(cacheError.path, unlessIn: cacheError.message))"
        case .outOfSpace:
            cause = "out of space: \(cacheError.message)\(naming(cacheError.path, unlessIn: cacheError.message))"
        case .entryTooLarge:
            cause = "the entry does not fit the store's size limit and was not stored"
        default:
            // The code, the sentence and the path; never the underlying error's own dump (an NSError or
            // an internal type), which says nothing the sentence does not.
            cause = "\(cacheError.code): \(cacheError.message)\(naming(cacheError.path, unlessIn: cacheError.message))"
        }
        return .store("store \(store): \(oneLine(cause))")
    }

    /// ` (path: PATH)` when `message` does not already name `path`: a refusal is only actionable when the
    /// user can tell which file or folder refused (a lock file, a fan-out folder, the store folder).
    private static func naming(_ path: String?, unlessIn message: String) -> String {
        guard let path, !message.contains(path) else { return "" }
        return " (path: \(path))"
    }
}

extension CLIFailure {
    /// A failed read in the documented form `store DIR: cannot read PATH: REASON` when the store names the
    /// file or folder that could not be read (a foreign item, an unreadable folder); otherwise as
    /// ``store(_:store:masterKeySource:)``.
    ///
    /// - Parameters:
    ///   - error: What the store threw.
    ///   - store: The store's folder, shown to the user.
    /// - Returns: A `.store` failure.
    static func read(_ error: any Error, store: String) -> CLIFailure {
        if let cacheError = error as? CacheError, let path = cacheError.path,
            cacheError.code == .io || cacheError.code == .permissionDenied
        {
            return .store("store \(store): cannot read \(path): \(reason(of: cacheError))")
        }
        return Self.store(error, store: store)
    }

    /// The reason part of `cannot read PATH: REASON`: the system's words for a failed call ("Permission
    /// denied"), else the error's own message; never a type's dump.
    ///
    /// - Parameter error: An error a store reported (a `CacheError`, usually with a POSIX cause).
    /// - Returns: One line.
    static func reason(of error: any Error) -> String {
        guard let cacheError = error as? CacheError else {
            // `localizedDescription` is Foundation proper's, not FoundationEssentials'; Apple platforms keep it.
            #if canImport(FoundationEssentials)
            return oneLine(String(describing: error))
            #else
            return oneLine(error.localizedDescription)
            #endif
        }
        if let posix = cacheError.cause as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return oneLine(cacheError.message)
    }
}

/// Collapses line breaks so that every message stays on one line.
///
/// - Parameter text: Any message.
/// - Returns: The message with each run of line breaks replaced by a space.
func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).joined(separator: " ")
}
