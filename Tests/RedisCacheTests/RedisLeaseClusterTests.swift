import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import RedisCache

/// The load fence and the lease on the shared test cluster: an entry's removal counter and lease share its
/// slot, so every script is one `EVAL` on the key's primary (no `CROSSSLOT`), for keys on every primary.
@Suite(.enabled(if: RedisCluster.suitesRun, RedisServer.skipNote))
struct RedisLeaseClusterTests {
    @Test func theCounterLeaseAndEntryOfKeysOnEveryPrimaryWorkTogether() async throws {
        // Given two instances seeded with different nodes, and keys spread over every primary. Leases last an
        // hour: a ThreadSanitizer run on two loaded cores held this test back for over a minute between awaits.
        let cluster = try await RedisCluster.shared()
        let (loader, other) = try await RedisClusterTierTests.instances(seeds: 3, 4)
        let keys = (0..<30).map { "key-\($0)" }
        for key in keys {
            // A lease: one holder at a time
            let acquired = try await loader.acquireLease(forKey: key, duration: .seconds(3_600))
            guard case .acquired(let lease) = acquired else {
                Issue.record("no lease for \(key)")
                continue
            }
            #expect(try await other.acquireLease(forKey: key, duration: .seconds(3_600)) == .heldElsewhere)
            // A ticket with no removal since stores, tagged
            let ticket = try await loader.loadTicket(forKey: key, tags: ["t"])
            let value = Data("value of \(key)".utf8)
            #expect(try await loader.setEntry(CacheEntry(value: value, tags: ["t"]), forKey: key, ticket: ticket))
            // Released: the other instance can take it now. (Not the release's own answer: a release resent
            // after a deadline miss on a loaded machine finds its first send already freed the lease.)
            try await loader.releaseLease(lease)
            guard case .acquired(let taken) = try await other.acquireLease(forKey: key, duration: .seconds(3_600))
            else {
                Issue.record("the lease of \(key) is still held after its release")
                continue
            }
            try await other.releaseLease(taken)
            // A waiter finds it at once
            guard case .entry(let entry, _) = try await other.waitForEntry(forKey: key, until: .now + .seconds(3_600))
            else {
                Issue.record("no entry for \(key)")
                continue
            }
            #expect(entry.value == value)
            // A removal by the other instance advances the counter and refuses a ticket taken before it
            let before = try await loader.loadTicket(forKey: key, tags: [])
            try await other.removeEntry(forKey: key)
            #expect(try await !loader.setEntry(CacheEntry(value: Data("stale".utf8)), forKey: key, ticket: before))
            #expect(try await loader.loadTicket(forKey: key, tags: []).keyVersion == before.keyVersion + 1)
            #expect(try await other.value(forKey: key) == nil)
        }
        let primaries = Set(try keys.compactMap { try RedisClusterTierTests.primary(of: $0, in: loader) })
        #expect(primaries == Set(cluster.ports[0..<3]))
        #expect(loader.route.cluster != nil)
        await loader.close()
        await other.close()
    }
}
