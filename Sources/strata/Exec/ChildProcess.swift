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

/// What a finished command produced.
struct ChildResult {
    /// How the collection ended.
    enum Outcome: Equatable {
        /// Both outputs were collected whole.
        case complete
        /// This process's stdout was closed (`EPIPE`): the command was stopped; outputs are incomplete.
        case outputClosed
        /// The outputs together passed the cap: collection stopped (the outputs here are empty), the
        /// echo went on.
        case overLimit
    }

    /// Exit status, or 128 + the signal number when a signal ended the command (as a shell reports it).
    var status: Int32
    /// Everything written to standard output (empty unless ``outcome`` is `.complete`).
    var standardOutput: Data
    /// Everything written to standard error (empty unless ``outcome`` is `.complete`).
    var standardError: Data
    /// Whether the outputs are whole, and if not, why.
    var outcome: Outcome = .complete
}

/// Starts commands with `posix_spawn` and collects their output.
///
/// Both output pipes are drained in one `poll(2)` loop on the calling thread, so a command that fills
/// one pipe while we wait on the other cannot deadlock. Collection stops at a cap, so memory stays
/// bounded however much a command writes; the echo goes on past it.
/// The child gets the default disposition for every signal and an empty signal mask, so it behaves as
/// if a shell had started it even though this process ignores `SIGPIPE`.
enum ChildProcess {
    /// Runs `arguments` to completion.
    ///
    /// - Parameters:
    ///   - arguments: The command (looked up in `PATH` like a shell does) and its arguments.
    ///   - echoesOutput: When `true`, copies the command's output to this process's stdout and stderr as
    ///     it arrives, so a first run is seen live. When stdout turns out to be closed (`EPIPE`, the
    ///     reader of a pipeline went away), the read end of the command's stdout pipe is closed, so its
    ///     next write meets `SIGPIPE` as in a shell pipeline, and the command is sent `SIGTERM`.
    ///   - outputLimit: Bytes of stdout plus stderr to collect at most; `nil` for no cap.
    /// - Returns: The exit status, both outputs, and whether they are whole.
    /// - Throws: `CLIFailure.launch` (127 not found, 126 not executable) when the command cannot start,
    ///   `CLIFailure.store` when a pipe cannot be created.
    static func run(_ arguments: [ByteString], echoesOutput: Bool, outputLimit: Int?) throws(CLIFailure) -> ChildResult
    {
        let program = arguments.first ?? ByteString("")
        let path = try ExecutableLookup.resolve(program)
        DescriptorHygiene.protectOwnDescriptors()
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        guard makePipe(&outputPipe), makePipe(&errorPipe) else {
            let reason = String(cString: strerror(errno))
            for descriptor in outputPipe + errorPipe where descriptor >= 0 { close(descriptor) }
            throw .store("cannot create a pipe for \(program.escaped): \(reason)")
        }
        let pid: pid_t
        do {
            pid = try spawn(
                path: path, arguments: arguments,
                redirect: [(outputPipe[1], STDOUT_FILENO), (errorPipe[1], STDERR_FILENO)], newSession: false)
        } catch {
            for descriptor in outputPipe + errorPipe { close(descriptor) }
            throw error
        }
        close(outputPipe[1])
        close(errorPipe[1])
        var collector = OutputCollector(limit: outputLimit, echoes: echoesOutput, child: pid)
        collector.drain(output: outputPipe[0], error: errorPipe[0])
        return ChildResult(
            status: waitForExit(pid), standardOutput: collector.collected[0], standardError: collector.collected[1],
            outcome: collector.outcome)
    }

    /// Starts `arguments` in a new session with stdin, stdout and stderr on `/dev/null`, and does not
    /// wait for it: the background refresh of `exec --stale`. When this process exits, the child is
    /// adopted by init (or the nearest subreaper) and reaped there.
    ///
    /// - Parameters:
    ///   - path: The executable to start (this tool itself).
    ///   - arguments: Its argument vector, `argv[0]` included.
    /// - Returns: `true` when the child started.
    @discardableResult
    static func spawnDetached(path: ByteString, arguments: [ByteString]) -> Bool {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return false }
        defer { close(null) }
        DescriptorHygiene.protectOwnDescriptors()
        let started = try? spawn(
            path: path, arguments: arguments,
            redirect: [(null, STDIN_FILENO), (null, STDOUT_FILENO), (null, STDERR_FILENO)], newSession: true)
        return started != nil
    }

    // MARK: - Spawning

    private static func makePipe(_ pair: inout [Int32]) -> Bool {
        guard pipe(&pair) == 0 else { return false }
        // Close-on-exec keeps the pipe ends out of the child: only the dup2'd copies survive exec.
        _ = fcntl(pair[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pair[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    private static func spawn(
        path: ByteString, arguments: [ByteString], redirect: [(Int32, Int32)], newSession: Bool
    ) throws(CLIFailure) -> pid_t {
        // `os(Linux)`, not `canImport(Darwin)`: the two libraries give these names different C types (a struct
        // in glibc, a pointer on Darwin) that the Darwin type-check's stand-in cannot model, so the Darwin form
        // is read against Apple's <spawn.h> only (Docs/Platforms.md).
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (source, target) in redirect { posix_spawn_file_actions_adddup2(&actions, source, target) }

        var allSignals = sigset_t()
        sigfillset(&allSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= spawnNewSessionFlag }
        posix_spawnattr_setflags(&attributes, Int16(truncatingIfNeeded: flags))

        // The child gets the exact bytes it was given: no UTF-8 round trip.
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { argument in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: argument.bytes.count + 1)
            for (offset, byte) in argument.bytes.enumerated() { copy[offset] = CChar(bitPattern: byte) }
            copy[argument.bytes.count] = 0
            return copy
        }
        argv.append(nil)
        defer { for pointer in argv { pointer?.deallocate() } }

        var pid: pid_t = 0
        let result = path.withCString { posix_spawn(&pid, $0, &actions, &attributes, argv, currentEnvironment()) }
        guard result == 0 else {
            let reason = String(cString: strerror(result))
            let status = result == ENOENT ? ExitStatus.notFound : ExitStatus.notExecutable
            throw .launch(
                "\((arguments.first ?? path).escaped): cannot execute: \(reason)", status: status)
        }
        return pid
    }

    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return ExitStatus.notExecutable }
        }
        // The wait-status layout is the same on Linux and the BSDs: low 7 bits the signal, next byte the code.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
