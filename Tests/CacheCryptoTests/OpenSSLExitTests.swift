#if os(Linux)
import Foundation
import StrataTestSupport
import Testing

/// A process that exits while other threads are inside OpenSSL exits cleanly: the library is initialized
/// without its `atexit` handler (OpenSSLBackend.libraryIsReady, TLSContext.libraryIsReady), which would
/// otherwise free the library's state while those threads still use it and crash the process on its way out.
///
/// Each run starts a `strata-exit-probe` child (Tests/ExitProbe) whose threads seal, open, MAC, derive and
/// draw random bytes in a loop (and, in `tls` mode, make TLS contexts) while its main thread calls `exit(0)`.
/// With the handler registered (the probe's `control` mode initializes OpenSSL the old way first), 4 of 40
/// runs died of SIGSEGV on the development machine, so 60 runs catch it with near certainty (about 99.8 %);
/// with the fix, 0 of 40 (and 0 of 120 in the two modes here). Nothing here depends on speed: the child exits
/// once every thread has finished one round, whenever that is.
@Suite(.serialized) struct OpenSSLExitTests {
    @Test(arguments: ["crypto", "tls"])
    func aProcessExitingWhileThreadsUseOpenSSLExitsCleanly(mode: String) throws {
        let probe = try BuiltProduct.url(named: "strata-exit-probe")
        var statuses: [String] = []
        for _ in 0..<60 {
            statuses.append(try run(probe, [mode, "4"]))
        }
        // Every run ended by exit(0): no signal, no thrown round.
        #expect(statuses.filter { $0 != "exit 0" } == [], "\(statuses.filter { $0 != "exit 0" })")
    }

    /// Runs the probe once; returns "exit N" or "signal N". A bound against a hang, not a speed check.
    private func run(_ probe: URL, _ arguments: [String]) throws -> String {
        // A crash must end the child at once: Swift's backtracer can hang in a crashing multi-threaded process.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let process = try ChildProcess(probe.path, arguments, environment: environment)
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning && ContinuousClock.now < deadline { usleep(1_000) }
        guard let termination = process.termination else {
            process.terminate()
            return "still running after 120 s"
        }
        switch termination {
        case .exited(let code): return "exit \(code)"
        case .signalled(let signal): return "signal \(signal)"
        }
    }
}
#endif  // os(Linux): only the OpenSSL back end registers an exit handler
