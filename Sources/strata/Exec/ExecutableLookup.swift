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

/// Finds a command the way a POSIX shell does: a name containing `/` is a path; any other name is
/// searched in each `PATH` entry in order (an empty entry means the current directory).
enum ExecutableLookup {
    /// `PATH` when the environment has none (the `confstr(_CS_PATH)` default on glibc).
    static let fallbackSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// Resolves `name` to an executable file. Works on raw bytes: a name or a `PATH` entry that is not
    /// UTF-8 is found as the shell would find it.
    ///
    /// - Parameter name: `argv[0]` of the command.
    /// - Returns: The path to execute.
    /// - Throws: `CLIFailure.launch` with status 127 when nothing is found, 126 when only a file without
    ///   execute permission (or a directory) is found.
    static func resolve(_ name: ByteString) throws(CLIFailure) -> ByteString {
        let slash = UInt8(ascii: "/")
        if name.bytes.contains(slash) {
            switch check(name) {
            case .executable: return name
            case .missing: throw .launch("\(name.escaped): no such file or directory", status: ExitStatus.notFound)
            case .notExecutable(let why):
                throw .launch("\(name.escaped): \(why)", status: ExitStatus.notExecutable)
            }
        }
        let searchPath = RawProcess.environmentValue("PATH") ?? ByteString(fallbackSearchPath)
        var refusal: String?
        for entry in searchPath.bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            let candidate = entry.isEmpty ? name : ByteString(Array(entry) + [slash] + name.bytes)
            switch check(candidate) {
            case .executable: return candidate
            case .missing: continue
            case .notExecutable(let why): refusal = refusal ?? "\(candidate.escaped): \(why)"
            }
        }
        if let refusal { throw .launch(refusal, status: ExitStatus.notExecutable) }
        throw .launch("\(name.escaped): command not found", status: ExitStatus.notFound)
    }

    private enum Verdict {
        case executable
        case missing
        case notExecutable(String)
    }

    private static func check(_ path: ByteString) -> Verdict {
        path.withCString { pointer in
            var info = stat()
            guard stat(pointer, &info) == 0 else { return .missing }
            if (info.st_mode & S_IFMT) == S_IFDIR { return .notExecutable("is a directory") }
            guard access(pointer, X_OK) == 0 else { return .notExecutable("permission denied") }
            return .executable
        }
    }
}

/// The process environment as a C array, for `posix_spawn`.
func currentEnvironment() -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    #if canImport(Darwin)
    return _NSGetEnviron().pointee
    #else
    return environ
    #endif
}

/// `POSIX_SPAWN_SETSID`: start the child in a new session (glibc 2.26+, macOS 10.15+), so that a
/// terminal's hang-up or Ctrl-C aimed at the foreground job does not reach a background refresh.
/// glibc declares it only under `_GNU_SOURCE`, which Swift's Glibc module does not define, so the
/// values come from `<spawn.h>` of each system.
#if canImport(Darwin)
let spawnNewSessionFlag: Int32 = 0x400
#else
let spawnNewSessionFlag: Int32 = 0x80
#endif
