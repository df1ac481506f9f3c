import CacheCore
import Foundation
import RedisConnection
import StrataTestSupport
import Testing

@testable import RedisCache

/// The cross-process load fence against a real server: a removal advances the key's counter in the script that
/// removes the entry, and a load's store goes through only while the counter still holds its ticket's value
/// (Docs/RedisCache.md, "Load fencing and leases").
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisLoadFenceTests {
    /// Two instances of one namespace and master key on `server`: two processes, as far as Redis can tell.
    /// Their load leases last an hour, so a loaded machine never expires one under a test.
    static func pair(_ server: RedisServer) throws -> (RedisCache<String, String>, RedisCache<String, String>) {
        var configuration = try RedisTier.configuration(
            port: server.port, namespace: RedisTier.namespace(), masterKey: RedisTier.randomMasterKey())
        configuration.loadLease = .init(duration: .seconds(3_600), maximumWait: .seconds(3_600))
        return (try RedisCache(configuration: configuration), try RedisCache(configuration: configuration))
    }

    /// The removal counter's remaining time to live, in milliseconds (`PTTL`).
    static func counterTimeToLive(of key: String, in cache: RedisCache<String, String>) async throws -> Int64 {
        let counter = cache.keys.sibling(ofEntry: try cache.entryName(Data(key.utf8)), "r")
        let reply = try await cache.send(RESPCommand(arguments: [Array("PTTL".utf8), counter]), key: counter)
        guard case .integer(let milliseconds) = reply else { return -3 }
        return milliseconds
    }

    @Test func aRemovalAdvancesTheKeysCounterByOneAndGivesItHoursToLive() async throws {
        let server = try RedisServer()
        let (cache, _) = try Self.pair(server)
        try await cache.setValue("v", forKey: "k")
        let before = try await cache.loadTicket(forKey: "k", tags: [])

        try await cache.removeEntry(forKey: "k")

        let after = try await cache.loadTicket(forKey: "k", tags: [])
        #expect(after.keyVersion == before.keyVersion + 1)
        #expect(try await cache.value(forKey: "k") == nil)
        let lifetime = Int64(RedisCache<String, String>.removalCounterTimeToLive / .milliseconds(1))
        let left = try await Self.counterTimeToLive(of: "k", in: cache)
        #expect(left > lifetime - 600_000 && left <= lifetime)
        // A removal of a key never loaded creates its counter, with the same lifetime
        try await cache.removeEntry(forKey: "never loaded")
        #expect(try await Self.counterTimeToLive(of: "never loaded", in: cache) > lifetime - 600_000)
    }

    @Test func aTicketTakenBeforeAnotherInstancesRemovalRefusesTheStore() async throws {
        // Given a load in the first instance that took its ticket while "old" was current
        let server = try RedisServer()
        let (loader, remover) = try Self.pair(server)
        try await loader.setValue("old", forKey: "k")
        let ticket = try await loader.loadTicket(forKey: "k", tags: [])
        // When the second instance removes the key before the load stores
        try await remover.removeEntry(forKey: "k")
        let stored = try await loader.setEntry(
            CacheEntry(value: "loaded before the removal"), forKey: "k", ticket: ticket)
        // Then nothing is stored, for either instance
        #expect(!stored)
        #expect(try await loader.value(forKey: "k") == nil)
        #expect(try await remover.value(forKey: "k") == nil)
    }

    @Test func aTicketWithNoRemovalSinceStores() async throws {
        let server = try RedisServer()
        let (loader, reader) = try Self.pair(server)
        let ticket = try await loader.loadTicket(forKey: "k", tags: ["t"])
        // Another key's removal does not fence this one
        try await reader.removeEntry(forKey: "other")
        let stored = try await loader.setEntry(CacheEntry(value: "loaded", tags: ["t"]), forKey: "k", ticket: ticket)
        #expect(stored)
        #expect(try await reader.entry(forKey: "k")?.value == "loaded")
        #expect(try await reader.entry(forKey: "k")?.tags == ["t"])
        #expect(loader.statistics.insertions == 1)
    }

    @Test func aTicketOlderThanTheCountersLifetimeIsRefused() async throws {
        let server = try RedisServer()
        let (loader, reader) = try Self.pair(server)
        var ticket = try await loader.loadTicket(forKey: "k", tags: [])
        ticket.startedAt = ticket.startedAt - RedisCache<String, String>.removalCounterTimeToLive
        #expect(try await !loader.setEntry(CacheEntry(value: "too old"), forKey: "k", ticket: ticket))
        #expect(try await reader.value(forKey: "k") == nil)
    }

    @Test func aClearOrATagRemovalSinceTheTicketLeavesTheStoredEntryAMiss() async throws {
        let server = try RedisServer()
        let (loader, remover) = try Self.pair(server)
        let tagged = try await loader.loadTicket(forKey: "tagged", tags: ["t"])
        try await remover.removeAll(taggedWith: "t")
        _ = try await loader.setEntry(CacheEntry(value: "stale", tags: ["t"]), forKey: "tagged", ticket: tagged)
        #expect(try await remover.value(forKey: "tagged") == nil)
        #expect(try await loader.value(forKey: "tagged") == nil)

        let cleared = try await loader.loadTicket(forKey: "cleared", tags: [])
        try await remover.removeAll()
        _ = try await loader.setEntry(CacheEntry(value: "stale"), forKey: "cleared", ticket: cleared)
        #expect(try await remover.value(forKey: "cleared") == nil)
        #expect(try await loader.value(forKey: "cleared") == nil)
        // Once this instance has seen the clear, an older ticket is not even sent
        #expect(try await !loader.setEntry(CacheEntry(value: "stale"), forKey: "cleared", ticket: cleared))
    }

    @Test func aRedisCachesOwnLoadIsStoredUnlessAnotherInstanceRemovesTheKeyWhileItsLoaderRuns() async throws {
        // Given a load through the first instance's own load-once, whose loader waits until the second instance
        // has removed the key
        let server = try RedisServer()
        let (loader, remover) = try Self.pair(server)
        try await loader.setValue("old", forKey: "k")
        try await loader.removeEntry(forKey: "k")
        let loaded = try await loader.value(forKey: "k") {
            try await remover.removeEntry(forKey: "k")
            return "loaded before the removal"
        }
        // Then its caller gets the value, but Redis does not keep it
        #expect(loaded == "loaded before the removal")
        #expect(try await remover.value(forKey: "k") == nil)

        // And a load that no removal races is stored, for every instance, with its tags if it has any
        #expect(try await loader.value(forKey: "k") { "fresh" } == "fresh")
        #expect(try await remover.value(forKey: "k") == "fresh")
        #expect(try await loader.value(forKey: "tagged", tags: ["t"]) { "fresh" } == "fresh")
        #expect(try await remover.entry(forKey: "tagged")?.tags == ["t"])
    }

    /// One trial's source of truth: the version a loader reads, advanced by the writer before it removes the key.
    final class Source: Sendable {
        let version = Locked(0)
    }

    @Test func noStaleValueIsStoredOverAThousandRandomInterleavingsOfALoadAndARemoval() async throws {
        // Given a loader (ticket, read the source, store) in one instance and a writer (update the source,
        // then remove the key) in another, racing with random yields between their steps
        let server = try RedisServer()
        let (loader, writer) = try Self.pair(server)
        let trials = 1_000
        var generator = SplitMix64(seed: 27)
        let schedules = (0..<trials).map { _ in (0..<5).map { _ in Int.random(in: 0..<4, using: &generator) } }
        var stale = 0
        var stored = 0
        for batch in stride(from: 0, to: trials, by: 10) {
            let results = try await withThrowingTaskGroup(of: (stale: Bool, stored: Bool).self) { group in
                for trial in batch..<min(batch + 10, trials) {
                    let yields = schedules[trial]
                    group.addTask {
                        let key = "key-\(trial)"
                        let source = Source()
                        try await writer.setValue("0", forKey: key)
                        async let wrote: Void = {
                            for _ in 0..<yields[0] { await Task.yield() }
                            source.version.withLock { $0 += 1 }
                            for _ in 0..<yields[1] { await Task.yield() }
                            try await writer.removeEntry(forKey: key)
                        }()
                        for _ in 0..<yields[2] { await Task.yield() }
                        let ticket = try await loader.loadTicket(forKey: key, tags: [])
                        for _ in 0..<yields[3] { await Task.yield() }
                        let loaded = source.version.withLock { String($0) }
                        for _ in 0..<yields[4] { await Task.yield() }
                        let didStore = try await loader.setEntry(CacheEntry(value: loaded), forKey: key, ticket: ticket)
                        try await wrote
                        // Then whatever the server holds is the source's final version
                        let held = try await writer.value(forKey: key)
                        return (held != nil && held != "1", didStore)
                    }
                }
                return try await group.reduce(into: [(stale: Bool, stored: Bool)]()) { $0.append($1) }
            }
            stale += results.filter(\.stale).count
            stored += results.filter(\.stored).count
        }
        #expect(stale == 0)
        // Not asserted (the scheduler decides the mix), but recorded: how many loads stored.
        print("load fence interleavings: \(stored) of \(trials) stores accepted, \(stale) stale")
    }
}
