import CacheCore
import Foundation
import MemoryCache
import MultiCache
import RedisCache

#if canImport(Glibc)
import Glibc
#endif

/// Coherence through the Redis tier's tracking connection (issue 16), on a child `redis-server`:
///
/// - `redis-invalidation-delay`: two `MultiCache([memory, redis])` clients on one namespace; the time
///   from the start of a `setValue` on one to the other's memory tier no longer holding the old value,
///   per trial (≥ 1,000 trials), against the time from the same start to the tracking push reaching the
///   other's Redis tier (an observer of the tier). Target p99 ≤ 5 ms.
/// - `redis-invalidation-loss`: the server is stopped (`SIGSTOP`: silent, no close) and the time until
///   the memory tier above is flushed is measured, against keep-alive interval + read deadline (the
///   bound the tracking connection promises). Target ≤ that bound (plus 10 % for scheduling).
/// - `redis-invalidation-hit`: a memory-tier hit of `MultiCache([memory, redis])` with tracking on vs off.
///   Target ≤ 1.05×.
enum RedisInvalidationRows {
    static let scenario = Scenario("redis-invalidation-delay", "redis-invalidation-loss", "redis-invalidation-hit") {
        context in
        guard RedisBenchServer.executable("redis-server") != nil else {
            print("redis invalidation rows skipped: redis-server is not installed")
            return []
        }
        let server = try RedisBenchServer()
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) })
        return [
            try await delay(server, masterKey: masterKey, trials: context.size(full: 5_000, quick: 1_000)),
            try await loss(server, masterKey: masterKey, trials: context.quick ? 3 : 7),
            try await hit(server, masterKey: masterKey, context: context),
        ]
    }

    /// A client: its memory tier, its Redis tier and the MultiCache over both.
    struct Client {
        let memory: MemoryCache<String, String>
        let redis: RedisCache<String, String>
        let multi: MultiCache<String, String>

        init(_ server: RedisBenchServer, namespace: String, masterKey: Data, tracking: Bool = true, defaults: Bool = false)
            throws
        {
            var configuration = RedisCacheConfiguration(
                port: server.port, namespace: namespace, masterKeySource: .masterKey(masterKey))
            if !defaults {
                configuration.readTimeout = .seconds(1)
                configuration.writeTimeout = .seconds(1)
            }
            configuration.tracksInvalidations = tracking
            memory = try MemoryCache(countLimit: 10_000)
            redis = try RedisCache(configuration: configuration)
            multi = try MultiCache([memory, redis])
        }

        /// Waits (yielding) until tracking is on.
        func waitUntilTracking() async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !redis.health.isTracking {
                guard ContinuousClock.now < deadline else { throw Failure("tracking did not start") }
                await Task.yield()
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// When the first push naming `key` reached a tier, in monotonic nanoseconds.
    final class PushClock: Sendable {
        private let state = PthreadLocked<(key: String, since: UInt64, at: UInt64?)>(("", .max, nil))

        /// Waits for a push naming `key` that arrives at or after `since`.
        func expect(_ key: String, since: UInt64) { state.withLock { $0 = (key, since, nil) } }
        var arrival: UInt64? { state.withLock { $0.at } }

        func record(_ invalidation: CacheInvalidation<String>) {
            let now = monotonicNanoseconds()
            state.withLock { state in
                // A late push for the trial's earlier write of "old" can land between `expect` and the
                // timed write; it is not the push being timed (and would make the interval negative).
                guard state.at == nil, now >= state.since, case .keys(let keys) = invalidation,
                    keys.contains(state.key)
                else { return }
                state.at = now
            }
        }
    }

    static func delay(_ server: RedisBenchServer, masterKey: Data, trials: Int) async throws -> ScenarioResult {
        let writer = try Client(server, namespace: "invalidation-delay", masterKey: masterKey)
        let reader = try Client(server, namespace: "invalidation-delay", masterKey: masterKey)
        let pushes = PushClock()
        let subscription = reader.redis.addInvalidationObserver { pushes.record($0) }
        defer { subscription.cancel() }
        try await writer.waitUntilTracking()
        try await reader.waitUntilTracking()
        var flushed = Latencies()
        var pushed = Latencies()
        var afterReturn = Latencies()
        for trial in 0...trials {
            let key = "k\(trial % 64)"
            try await writer.multi.setValue("old", forKey: key)
            // The reader holds the old value in memory (read until its own copy is there)
            let deadline = ContinuousClock.now + .seconds(5)
            while reader.memory.value(forKey: key) != "old" {
                guard ContinuousClock.now < deadline else { throw Failure("the reader never held the old value") }
                _ = try await reader.multi.value(forKey: key)
            }
            let start = monotonicNanoseconds()
            pushes.expect(key, since: start)
            try await writer.multi.setValue("new", forKey: key)
            let returned = monotonicNanoseconds()
            while reader.memory.value(forKey: key) == "old" {
                guard ContinuousClock.now < deadline else { throw Failure("the old value was never dropped") }
                await Task.yield()
            }
            let gone = monotonicNanoseconds()
            guard trial > 0 else { continue }  // the first trial warms up
            flushed.samples.append(Double(gone - start) / 1e6)
            afterReturn.samples.append(Double(gone - returned) / 1e6)
            pushed.samples.append(Double((pushes.arrival ?? gone) - start) / 1e6)
        }
        await writer.redis.close()
        await reader.redis.close()
        let flushedP99 = flushed.percentile(0.99)
        return ScenarioResult(
            name: "redis-invalidation-delay", unit: .milliseconds, strata: Summary(flushed.samples),
            baseline: Summary(pushed.samples),
            target: Target(description: "p99 ≤ 5 ms") { _ in flushedP99 <= 5 },
            extras: [
                ("flushed p50 ms", flushed.percentile(0.5)), ("flushed p99 ms", flushed.percentile(0.99)),
                ("push p50 ms", pushed.percentile(0.5)), ("push p99 ms", pushed.percentile(0.99)),
                ("after set returned p99 ms", afterReturn.percentile(0.99)),
            ],
            notes: [
                "\(trials) trials: from the start of setValue on one MultiCache([memory, redis]) to the other's memory "
                    + "tier no longer holding the old value, vs to the tracking push reaching the other's Redis tier"
            ])
    }

    /// When the tier last published `.all`, in monotonic nanoseconds.
    final class FlushClock: Sendable {
        private let state = PthreadLocked<UInt64?>(nil)
        var last: UInt64? { state.withLock { $0 } }

        func record(_ invalidation: CacheInvalidation<String>) {
            guard case .all = invalidation else { return }
            let now = monotonicNanoseconds()
            state.withLock { $0 = now }
        }
    }

    static func loss(_ server: RedisBenchServer, masterKey: Data, trials: Int) async throws -> ScenarioResult {
        // The tier's own defaults: keep-alive 500 ms, read deadline 50 ms.
        let client = try Client(server, namespace: "invalidation-loss", masterKey: masterKey, defaults: true)
        // Written by another client, so no write of the measured client's own comes back mid-trial.
        let writer = try Client(server, namespace: "invalidation-loss", masterKey: masterKey, tracking: false)
        try await writer.multi.setValue("v", forKey: "k")
        let flushes = FlushClock()
        let subscription = client.redis.addInvalidationObserver { flushes.record($0) }
        defer { subscription.cancel() }
        let bound = Double(client.redis.configuration.keepAliveInterval.timeInterval
            + client.redis.configuration.readTimeout.timeInterval) * 1000
        var times: [Double] = []
        for _ in 0..<trials {
            try await client.waitUntilTracking()
            let deadline = ContinuousClock.now + .seconds(10)
            while client.memory.value(forKey: "k") == nil {
                guard ContinuousClock.now < deadline else { throw Failure("the memory tier never held the value") }
                _ = try await client.multi.value(forKey: "k")
            }
            let start = monotonicNanoseconds()
            server.signal(SIGSTOP)
            // Flushed: the loss was published (after `start`) and the memory tier no longer holds the value.
            while (flushes.last ?? 0) < start || client.memory.value(forKey: "k") != nil {
                guard ContinuousClock.now < deadline else {
                    server.signal(SIGCONT)
                    throw Failure("a silent server never flushed the tier above")
                }
                await Task.yield()
            }
            times.append(Double(monotonicNanoseconds() - start) / 1e6)
            server.signal(SIGCONT)
        }
        await client.redis.close()
        await writer.redis.close()
        return ScenarioResult(
            name: "redis-invalidation-loss", unit: .milliseconds, strata: Summary(times),
            baseline: Summary(exactly: bound),
            target: Target(description: "≤ keep-alive + deadline (+10 %)") { $0.strata.maximum <= bound * 1.1 },
            notes: [
                "\(trials) trials: redis-server SIGSTOPped (silent, no close) until the memory tier above is flushed, "
                    + "vs keep-alive interval + read deadline (\(Int(bound)) ms); the PING goes out 500 ms after the "
                    + "last byte received, so a trial can end before the bound"
            ])
    }

    static func hit(_ server: RedisBenchServer, masterKey: Data, context: RunContext) async throws -> ScenarioResult {
        let with = try Client(server, namespace: "invalidation-hit-with", masterKey: masterKey)
        let without = try Client(server, namespace: "invalidation-hit-without", masterKey: masterKey, tracking: false)
        try await with.waitUntilTracking()
        let keys = (0..<2_000).map { "key\($0)" }
        for key in keys {
            try await with.multi.setValue("value", forKey: key)
            try await without.multi.setValue("value", forKey: key)
        }
        // Own writes come back as invalidations: read everything once more so both memory tiers hold it.
        for key in keys {
            _ = try await with.multi.value(forKey: key)
            _ = try await without.multi.value(forKey: key)
        }
        let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 50_000), below: keys.count, seed: 16)
            .map { keys[$0] }
        let (strata, baseline) = try await context.alternatingRounds.runAsync(
            strata: {
                try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { _ = try await with.multi.value(forKey: key) }
                }
            },
            baseline: {
                try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { _ = try await without.multi.value(forKey: key) }
                }
            })
        await with.redis.close()
        await without.redis.close()
        return ScenarioResult(
            name: "redis-invalidation-hit", unit: .nanosecondsPerOperation, strata: strata, baseline: baseline,
            target: .ratioAtMost(1.05),
            notes: ["MultiCache([memory, redis]) memory-tier hit with tracking on vs off"])
    }
}
