import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a finished command produced.
struct ChildResult {
    /// Exit status, or 128 + the signal number when a signal ended the command (as a shell reports it).
    var status: Int32
    /// Everything written to standard output.
    var standardOutput: Data
    /// Everything written to standard error.
    var standardError: Data
}

/// Starts commands with `posix_spawn` and collects their output.
///
/// Both output pipes are drained in one `poll(2)` loop on the calling thread, so a command that fills
/// one pipe while we wait on the other cannot deadlock, and outputs of any size are collected.
/// The child gets the default disposition for every signal and an empty signal mask, so it behaves as
/// if a shell had started it even though this process ignores `SIGPIPE`.
enum ChildProcess {
    /// Runs `arguments` to completion.
    ///
    /// - Parameters:
    ///   - arguments: The command (looked up in `PATH` like a shell does) and its arguments.
    ///   - echoesOutput: When `true`, copies the command's output to this process's stdout and stderr as
    ///     it arrives, so a first run is seen live.
    /// - Returns: The exit status and both outputs.
    /// - Throws: `CLIFailure.launch` (127 not found, 126 not executable) when the command cannot start,
    ///   `CLIFailure.store` when a pipe cannot be created.
    static func run(_ arguments: [String], echoesOutput: Bool) throws(CLIFailure) -> ChildResult {
        let path = try ExecutableLookup.resolve(arguments[0])
        DescriptorHygiene.protectOwnDescriptors()
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        guard makePipe(&outputPipe), makePipe(&errorPipe) else {
            let reason = String(cString: strerror(errno))
            for descriptor in outputPipe + errorPipe where descriptor >= 0 { close(descriptor) }
            throw .store("cannot create a pipe for \(arguments[0]): \(reason)")
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
        let (output, error) = drain(output: outputPipe[0], error: errorPipe[0], echoes: echoesOutput)
        close(outputPipe[0])
        close(errorPipe[0])
        return ChildResult(status: waitForExit(pid), standardOutput: output, standardError: error)
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
    static func spawnDetached(path: String, arguments: [String]) -> Bool {
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
        path: String, arguments: [String], redirect: [(Int32, Int32)], newSession: Bool
    ) throws(CLIFailure) -> pid_t {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
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

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, currentEnvironment())
        guard result == 0 else {
            let reason = String(cString: strerror(result))
            let status = result == ENOENT ? ExitStatus.notFound : ExitStatus.notExecutable
            throw .launch("\(arguments[0]): cannot execute: \(reason)", status: status)
        }
        return pid
    }

    // MARK: - Collecting output

    private static func drain(output: Int32, error: Int32, echoes: Bool) -> (Data, Data) {
        var collected = [Data(), Data()]
        var echoing = [echoes, echoes]
        var descriptors = [
            pollfd(fd: output, events: Int16(POLLIN), revents: 0),
            pollfd(fd: error, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while descriptors.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in descriptors.indices where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes {
                    systemRead(descriptors[index].fd, $0.baseAddress, $0.count)
                }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    // End of file (or an unreadable pipe): a negative fd makes poll skip it.
                    descriptors[index].fd = -1
                    continue
                }
                let chunk = Data(buffer[0..<count])
                collected[index].append(chunk)
                if echoing[index] {
                    // A closed stdout (EPIPE) stops the echo, not the collection.
                    echoing[index] = StandardStreams.write(chunk, to: index == 0 ? STDOUT_FILENO : STDERR_FILENO)
                }
            }
        }
        return (collected[0], collected[1])
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
