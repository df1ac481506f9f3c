import Foundation
import StrataTestSupport
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// `ChildProcess`, the `posix_spawn` helper every test and tool uses instead of `Foundation.Process`
/// (Docs/Testing.md: Swift 6.3.1's `Process.run()` crashes with more than about 1,365 descriptors open).
@Suite struct ChildProcessTests {
    @Test func reportsTheExitStatus() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "exit 7"])
        #expect(child.waitUntilExit() == .exited(7))
        #expect(child.waitUntilExit().shellStatus == 7)
        #expect(!child.isRunning)
        #expect(child.termination == .exited(7))
    }

    @Test func reportsADeathBySignal() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "kill -TERM $$"])
        #expect(child.waitUntilExit() == .signalled(SIGTERM))
        #expect(child.waitUntilExit().shellStatus == 128 + SIGTERM)
    }

    @Test func killEndsARunningChildAndIsRunningTurnsFalse() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "exec sleep 600"])
        #expect(child.isRunning)
        child.kill(SIGKILL)
        #expect(child.waitUntilExit() == .signalled(SIGKILL))
        #expect(!child.isRunning)
        child.kill(SIGKILL)  // after the reap: a no-op, never a signal to a reused pid
    }

    @Test func capturesStandardOutputAndStandardErrorApart() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "printf out; printf err >&2"], standardOutput: .pipe, standardError: .pipe)
        let output = child.standardOutput?.readDataToEndOfFile()
        let error = child.standardError?.readDataToEndOfFile()
        #expect(child.waitUntilExit() == .exited(0))
        #expect(output == Data("out".utf8))
        #expect(error == Data("err".utf8))
    }

    @Test func mergesStandardErrorIntoStandardOutput() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "printf a; printf b >&2; printf c"], standardOutput: .pipe,
            standardError: .standardOutput)
        #expect(child.standardOutput?.readDataToEndOfFile() == Data("abc".utf8))
        #expect(child.waitUntilExit() == .exited(0))
    }

    @Test func feedsStandardInput() throws {
        let child = try ChildProcess("/bin/cat", standardInput: .pipe, standardOutput: .pipe)
        try child.standardInput?.write(contentsOf: Data("fed through a pipe".utf8))
        try child.standardInput?.close()
        #expect(child.standardOutput?.readDataToEndOfFile() == Data("fed through a pipe".utf8))
        #expect(child.waitUntilExit() == .exited(0))
    }

    @Test func honoursTheWorkingDirectoryAndTheEnvironment() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "pwd; printf '%s' \"$STRATA_CHILD_TEST\"; printf '%s' \"${HOME-unset}\""],
            environment: ["STRATA_CHILD_TEST": "given"], directory: "/usr", standardOutput: .pipe)
        let output = String(decoding: child.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(child.waitUntilExit() == .exited(0))
        // The environment is exactly the one given: HOME is not passed on.
        #expect(output == "/usr\ngivenunset")
    }

    @Test func searchesPathForABareName() throws {
        let child = try ChildProcess("sh", ["-c", "exit 3"], searchPath: true)
        #expect(child.waitUntilExit() == .exited(3))
    }

    @Test func aMissingExecutableThrows() {
        #expect(throws: ChildProcess.SpawnError.self) {
            _ = try ChildProcess("/nonexistent/strata-no-such-program")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func aDescriptorWithoutCloseOnExecIsNotInherited() throws {
        // Opened without O_CLOEXEC, as many of the suite's descriptors are.
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor > 2)
        defer { close(descriptor) }
        let child = try ChildProcess(
            "/bin/sh", ["-c", "test -e /proc/self/fd/\(descriptor) && echo open || echo closed"],
            standardOutput: .pipe)
        let output = String(decoding: child.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(child.waitUntilExit() == .exited(0))
        #expect(output == "closed\n")
    }

    /// The regression test for swift-corelibs-foundation #5472: `Process.run()` crashed past ~1,365 open
    /// descriptors; spawning here must work with 1,500 more open than usual.
    @Test func spawnsWithManyDescriptorsOpen() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= 4_096, "the open-file limit \(limit.rlim_cur) is too low for this test")
        let descriptors = (0..<1_500).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in descriptors where descriptor >= 0 { close(descriptor) } }
        #expect(descriptors.allSatisfy { $0 >= 0 })
        let child = try ChildProcess(
            "/bin/sh", ["-c", "ls /proc/self/fd | wc -l"], standardOutput: .pipe)
        let output = String(decoding: child.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(child.waitUntilExit() == .exited(0))
        // The child sees only a handful (its three streams, ls's own), none of the 1,500.
        #expect((Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max) < 10)
    }

    @Test func isRunningAndWaitUntilExitMayRace() async throws {
        let child = try ChildProcess("/bin/sh", ["-c", "exit 5"])
        async let waited = child.exit()
        var polled = true
        while polled { polled = child.isRunning }
        #expect(await waited == .exited(5))
        #expect(child.termination == .exited(5))
    }
}
