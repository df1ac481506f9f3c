import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and reliability tools that run other programs.
///
/// Why not `Foundation.Process`: on Linux, Swift 6.3.1's `Process.run()` lists `/proc/self/fd` and over-reads
/// its directory buffer once more than about 1,365 descriptors are open, crashing the whole test process
/// (swift-corelibs-foundation #5472; Docs/Testing.md). Here the child closes every descriptor above 2 with
/// `posix_spawn_file_actions_addclosefrom_np` (Linux) or `POSIX_SPAWN_CLOEXEC_DEFAULT` (Darwin), so nothing is
/// scanned, and descriptors the parent opened without `O_CLOEXEC` never leak into the child either.
///
/// The child's status is reaped exactly once, under a lock, and cached: a pid is never waited for twice, so a
/// reused pid cannot be reaped by mistake.
///
/// Thread-safety: every member may be called from any thread.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable is sound: `pid` and the three handles are immutable after `init` (FileHandle is
    // Sendable), and `reaped` is read and written only while `lock` is held.

    /// Where one of the child's standard streams comes from or goes to.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A new pipe; the parent's end is the matching `standardInput`/`standardOutput`/`standardError`.
        case pipe
        /// The parent's descriptor `descriptor` (for example `STDERR_FILENO`), shared as is.
        case inherit(Int32)
        /// Standard error only: wherever standard output goes (`2>&1`).
        case standardOutput
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status (0 to 255).
        case exited(Int32)
        /// A signal (this number) ended it.
        case signalled(Int32)

        /// The status a shell reports: the exit status, or 128 plus the signal number.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }

        /// "exit status N" or "signal N".
        public var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// The error `init` throws when the child cannot be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The executable that failed to start.
        public var executable: String
        /// The `errno`-style code `posix_spawn` (or `pipe2`) returned.
        public var code: Int32

        /// The executable and the system's message for `code`.
        public var description: String { "cannot run \(executable): \(String(cString: strerror(code)))" }
    }

    /// The child's process id.
    public let pid: pid_t
    /// The write end of the child's standard input, when it was `.pipe`.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output, when it was `.pipe`.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it was `.pipe`.
    public let standardError: FileHandle?

    private let lock = NSLock()
    private var reaped: Termination?

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: A path, or (when `searchPath` is true) a bare name looked up in `PATH`.
    ///   - arguments: The arguments after the program name (which is `executable`).
    ///   - environment: The child's whole environment; `nil` passes this process's on.
    ///   - directory: The child's working directory; `nil` keeps this process's.
    ///   - standardInput, standardOutput, standardError: Where each stream comes from or goes to.
    ///   - newProcessGroup: Whether the child leads a process group of its own (so `kill(-pid, …)` reaches its
    ///     children too).
    ///   - searchPath: Whether a bare `executable` is looked up in `PATH` (`posix_spawnp`).
    /// - Throws: ``SpawnError`` when a pipe cannot be made or the program cannot be started.
    /// - Complexity: One `fork`-free spawn; O(arguments + environment) to build the C arrays.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, standardInput: Stream = .null, standardOutput: Stream = .null,
        standardError: Stream = .null, newProcessGroup: Bool = false, searchPath: Bool = false
    ) throws {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // The child's pipe ends, closed here once the child has its copies.
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }

        func connect(_ stream: Stream, to target: Int32, readByChild: Bool) throws -> FileHandle? {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", readByChild ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .inherit(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
                return nil
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, target)
                return nil
            case .pipe:
                let (read, write) = try Self.pipe(executable)
                let (child, parent) = readByChild ? (read, write) : (write, read)
                childEnds.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, target)
                return FileHandle(fileDescriptor: parent, closeOnDealloc: true)
            }
        }
        self.standardInput = try connect(standardInput, to: STDIN_FILENO, readByChild: true)
        self.standardOutput = try connect(standardOutput, to: STDOUT_FILENO, readByChild: false)
        self.standardError = try connect(standardError, to: STDERR_FILENO, readByChild: false)
        if let directory {
            #if canImport(Darwin)
            posix_spawn_file_actions_addchdir_np(&actions, directory)
            #else
            _ = GlibcExtensions.addChangeDirectory(&actions, directory)
            #endif
        }

        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        _ = GlibcExtensions.addCloseFrom(&actions, 3)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // Every catchable signal back to its default: the test runner ignores SIGPIPE, and a child inherits that.
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code =
            searchPath
            ? posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else {
            for handle in [self.standardInput, self.standardOutput, self.standardError] { try? handle?.close() }
            throw SpawnError(executable: executable, code: code)
        }
        self.pid = pid
    }

    deinit {
        // A child nobody waited for is reaped here if it already exited; one still running is left alone.
        _ = isRunning
    }

    /// A pipe whose both ends are close-on-exec, so no other child started meanwhile inherits them.
    private static func pipe(_ executable: String) throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        #if canImport(Darwin)
        guard Darwin.pipe(&ends) == 0 else { throw SpawnError(executable: executable, code: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #else
        guard GlibcExtensions.pipe2(&ends, O_CLOEXEC) == 0 else {
            throw SpawnError(executable: executable, code: errno)
        }
        #endif
        return (ends[0], ends[1])
    }

    /// Whether the child still runs. Reaps it (once) when it has exited.
    ///
    /// - Complexity: One `waitpid(WNOHANG)` until the child is reaped, then none.
    public var isRunning: Bool {
        lock.withLock {
            if reaped != nil { return false }
            return !reapIfExited()
        }
    }

    /// How the child ended, or `nil` while it runs.
    public var termination: Termination? {
        isRunning ? nil : lock.withLock { reaped }
    }

    /// Blocks the calling thread until the child ends, and returns how.
    ///
    /// Waits with `waitid(WNOWAIT)`, which leaves the child unreaped (so its pid cannot be reused meanwhile)
    /// and lets ``isRunning`` run concurrently; the one reap happens under the lock.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            if let reaped = lock.withLock({ reaped }) { return reaped }
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
            if result < 0 && errno == EINTR { continue }
            if let termination = lock.withLock({ reapIfExited() ? reaped : nil }) { return termination }
            // ECHILD: another thread reaped it between our checks; the cache has it now.
        }
    }

    /// Waits until the child ends, on a thread of its own (never blocking the cooperative pool).
    public func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.waitUntilExit()) }.start()
        }
    }

    /// Sends `signal` to the child, unless it was already reaped (its pid may name another process now).
    ///
    /// - Parameter group: Whether to signal the child's whole process group (started with `newProcessGroup`).
    public func kill(_ signal: Int32 = SIGKILL, group: Bool = false) {
        lock.withLock {
            guard reaped == nil else { return }
            #if canImport(Darwin)
            _ = Darwin.kill(group ? -pid : pid, signal)
            #else
            _ = Glibc.kill(group ? -pid : pid, signal)
            #endif
        }
    }

    /// Sends `SIGTERM`, as `Process.terminate()` did.
    public func terminate() { kill(SIGTERM) }

    /// Calls `waitpid(WNOHANG)` and caches the status; true when the child has exited. Call holding `lock`.
    private func reapIfExited() -> Bool {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
        guard result == pid else { return false }
        // The <sys/wait.h> macros are not imported: the low 7 bits are the signal, 0 for a normal exit.
        let signal = status & 0x7f
        reaped = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        return true
    }
}
