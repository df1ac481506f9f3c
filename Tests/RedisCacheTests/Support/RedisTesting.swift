import Foundation
import RedisCache
import RedisConnection

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Factories and small waits shared by the suites that talk to a real server.
enum RedisTesting {
    /// Whether the suite runs under ThreadSanitizer, where everything is slower: its runtime is linked in
    /// (`__tsan_init` resolves), or the environment says so.
    static let isSanitized: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["STRATA_TSAN"] != nil || environment["STRATA_STRESS_SCALE"] != nil { return true }
        // The main program's handle searches every loaded image, the sanitizer runtime included.
        return dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
    }()

    /// A connection to `port` with deadlines loose enough for a loaded 2-core machine, unless a test
    /// passes its own.
    static func connection(
        port: Int, readTimeout: Duration = .seconds(2), writeTimeout: Duration = .seconds(2),
        connectTimeout: Duration = .seconds(2), keepAlive: Duration = .seconds(30),
        breaker: CircuitBreaker = CircuitBreaker()
    ) throws -> RedisConnection {
        try RedisConnection(
            configuration: .init(
                port: port, connectTimeout: connectTimeout, readTimeout: readTimeout, writeTimeout: writeTimeout,
                keepAliveInterval: keepAlive, breaker: breaker))
    }

    /// Polls the asynchronous `condition` every 2 ms until it holds or `timeout` passes; whether it held.
    /// Used only where a real server or process decides the timing.
    static func waitAsync(timeout: Duration, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return await condition()
    }

    /// Polls `condition` every 2 ms until it holds or `timeout` passes; returns how long it took, or `nil`.
    /// Used only where a real server or process decides the timing.
    static func wait(timeout: Duration, _ condition: () -> Bool) async -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < timeout {
            if condition() { return ContinuousClock.now - start }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return condition() ? ContinuousClock.now - start : nil
    }

    /// Runs a test's SETUP step, retrying a failure (a deadline missed on a loaded machine, a connection
    /// still coming back) every 20 ms until `timeout`; the last failure is rethrown. Never for the step a
    /// test checks.
    static func settingUp<Result>(
        timeout: Duration = .seconds(30), _ body: () async throws -> Result
    ) async throws -> Result {
        let start = ContinuousClock.now
        while true {
            do {
                return try await body()
            } catch  where ContinuousClock.now - start < timeout {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The bulk string of `text`'s UTF-8 bytes.
    static func bulk(_ text: String) -> RESPValue { .bulkString(Array(text.utf8)) }
}
