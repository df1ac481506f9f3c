#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What of the working directory goes into an `exec` key: `--key-cwd absolute|none|relative:ROOT`.
///
/// - `absolute` (the default): the directory as `getcwd(3)` reports it, so one command run in two
///   checkouts is two results.
/// - `none`: no directory at all, for commands whose output does not depend on where they run.
/// - `relative:ROOT`: the directory relative to `ROOT` (resolved with `realpath(3)`, as `getcwd` resolves
///   the working directory): `.` at the root itself, `./sub/dir` below it. Agents whose checkouts sit at
///   different paths share results through Redis when each names its own checkout as the root. A working
///   directory outside the root is a usage error, never a key that could meet another directory's.
///
/// The three kinds never give the same key: an absolute directory starts with `/`, a relative one with
/// `.`, and `none` leaves the `cwd` field out (Docs/CLI.md, "The key").
enum ExecDirectory: Equatable {
    case absolute
    case none
    /// The working directory relative to the root, already resolved: `.` or `./PATH`.
    case relative(ByteString)

    /// Parses the option's value and, for `relative:ROOT`, places the working directory under the root.
    ///
    /// - Parameter option: `absolute`, `none` or `relative:ROOT`.
    /// - Throws: `CLIFailure.usage` for another value, a root that cannot be resolved, or a working
    ///   directory outside the root; `CLIFailure.store` for `relative:ROOT` when the working directory
    ///   cannot be determined.
    init(option: String) throws(CLIFailure) {
        switch option {
        case "absolute":
            self = .absolute
            return
        case "none":
            self = .none
            return
        default:
            break
        }
        guard option.hasPrefix(Self.relativePrefix), option.count > Self.relativePrefix.count else {
            throw .usage(
                "option --key-cwd '\(option)' is not absolute, none or relative:ROOT", command: "exec")
        }
        let root = String(option.dropFirst(Self.relativePrefix.count))
        guard let resolved = realpath(root, nil) else {
            let reason = String(cString: strerror(errno))
            throw .usage("option --key-cwd: cannot resolve the root '\(root)': \(reason)", command: "exec")
        }
        let rootBytes = ByteString(cString: resolved)
        free(resolved)
        let currentDirectory = try RawProcess.currentDirectory()
        guard let relative = Self.relativePath(of: currentDirectory.bytes, under: rootBytes.bytes) else {
            throw .usage(
                "the working directory \(currentDirectory.escaped) is not inside the --key-cwd root "
                    + "\(rootBytes.escaped); run from inside it, or key with --key-cwd none or absolute",
                command: "exec")
        }
        self = .relative(ByteString(relative))
    }

    private static let relativePrefix = "relative:"

    /// `.` when `directory` is `root`, `./REST` when it lies below it, `nil` otherwise. Whole path
    /// components only: `/work/ab` is not under `/work/a`.
    static func relativePath(of directory: [UInt8], under root: [UInt8]) -> [UInt8]? {
        let slash = UInt8(ascii: "/")
        // The root `/` ends in its separator; any other root gets one added before comparing.
        let base = root.last == slash ? root : root + [slash]
        if directory == root { return [UInt8(ascii: ".")] }
        guard directory.count > base.count, directory.starts(with: base) else { return nil }
        return [UInt8(ascii: "."), slash] + directory[base.count...]
    }
}
