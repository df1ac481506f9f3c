import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The basic rules: misses, round trips, replacement, removal and expiry. Every check starts from the
// empty cache and the clock its factory was given, and moves time only with `clock.set(to:)` from the
// start instant, so offsets are exact and no floating-point drift builds up.
extension ContractRun {
    func usesInjectedClock() async throws {
        clock.advance(by: 1234.5)
        let expected = clock.now
        let actual = cache.clock.now
        if actual != expected {
            throw violation(
                "the cache's clock does not read the clock given to the factory", expected: describe(expected),
                actual: describe(actual))
        }
    }

    func missOnEmptyCache() async throws {
        try await expectMiss("absent", "a fresh cache")
        let value = try await step("value(forKey:)") { try await cache.value(forKey: "absent") }
        try expect(value == nil, "value(forKey:) returned a value on a fresh cache")
        let contained = try await step("contains(_:)") { try await cache.contains("absent") }
        try expect(!contained, "contains(_:) returned true on a fresh cache")
        try await remove("absent")
        try await removeAll()
        try await expectMiss("absent", "after removing from a fresh cache")
    }

    func roundTripPreservesValueAndExpiry() async throws {
        let start = clock.now
        let text = Self.data("hello, cache")
        try await set(text, "round-trip", expiresAt: start.addingTimeInterval(60))
        let found = try await expectHit("round-trip", text, "after setEntry")
        try expectExpiry(found, start.addingTimeInterval(60), "after setEntry with an expiry")

        // Every byte value, so a tier that treats values as text or trims them is caught.
        let binary = Data((0...255).map { UInt8($0) } + [0, 0, 255])
        try await set(binary, "binary")
        let binaryEntry = try await expectHit("binary", binary, "after setEntry without expiry")
        try expectExpiry(binaryEntry, nil, "after setEntry without expiry")

        let relative = Self.data("relative")
        try await setValue(relative, "relative", expiry: .seconds(30))
        let relativeEntry = try await expectHit("relative", relative, "after setValue with .seconds(30)")
        try expectExpiry(relativeEntry, start.addingTimeInterval(30), "after setValue with .seconds(30)")

        let absolute = start.addingTimeInterval(3600.25)
        try await setValue(relative, "absolute", expiry: .at(absolute))
        let absoluteEntry = try await expectHit("absolute", relative, "after setValue with .at(date)")
        try expectExpiry(absoluteEntry, absolute, "after setValue with .at(date)")
    }

    func emptyValueIsHit() async throws {
        try await set(Data(), "empty")
        try await expectHit("empty", Data(), "an empty value")
        let value = try await step("value(forKey:)") { try await cache.value(forKey: "empty") }
        try expect(value == Data(), "value(forKey:) returned nil for an empty value")
        let contained = try await step("contains(_:)") { try await cache.contains("empty") }
        try expect(contained, "contains(_:) returned false for an empty value")
    }

    func overwriteReplaces() async throws {
        let start = clock.now
        let long = Data(repeating: 0x41, count: 4096)
        try await set(long, "key", expiresAt: start.addingTimeInterval(60))
        let short = Self.data("short")
        try await set(short, "key", expiresAt: start.addingTimeInterval(120))
        let replaced = try await expectHit("key", short, "after overwriting a long value with a short one")
        try expectExpiry(replaced, start.addingTimeInterval(120), "after overwriting with a later expiry")

        try await set(long, "key")
        let unexpiring = try await expectHit("key", long, "after overwriting a short value with a long one")
        try expectExpiry(unexpiring, nil, "after overwriting an expiring entry with one that never expires")

        try await set(short, "key", expiresAt: start.addingTimeInterval(5))
        let shorter = try await expectHit("key", short, "after overwriting with an earlier expiry")
        try expectExpiry(shorter, start.addingTimeInterval(5), "after overwriting with an earlier expiry")
    }

    func removeEntryDropsOnlyThatKey() async throws {
        for key in ["a", "b", "c"] { try await set(Self.data("value-\(key)"), key) }
        try await remove("b")
        try await expectMiss("b", "after removeEntry")
        try await expectHit("a", Self.data("value-a"), "after removing another key")
        try await expectHit("c", Self.data("value-c"), "after removing another key")
        try await remove("b")
        try await remove("never-set")
        try await expectHit("a", Self.data("value-a"), "after removing absent keys")
        try await set(Self.data("again"), "b")
        try await expectHit("b", Self.data("again"), "after setting a removed key again")
    }

    func removeAllEmpties() async throws {
        let keys = (0..<5).map { "key-\($0)" }
        for key in keys { try await set(Self.data(key), key, expiresAt: clock.now.addingTimeInterval(60)) }
        try await removeAll()
        for key in keys { try await expectMiss(key, "after removeAll") }
        try await removeAll()
        try await set(Self.data("after"), "key-0")
        try await expectHit("key-0", Self.data("after"), "after setting a key once removeAll returned")
        try await expectMiss("key-1", "after setting another key once removeAll returned")
    }

    func expiryBoundary() async throws {
        let start = clock.now
        let value = Self.data("ten seconds")
        try await setValue(value, "ttl", expiry: .seconds(10))
        clock.set(to: start.addingTimeInterval(9.999))
        let live = try await expectHit("ttl", value, "1 ms before the expiry instant")
        try expectExpiry(live, start.addingTimeInterval(10), "an entry written with a 10 s TTL")
        clock.set(to: start.addingTimeInterval(10))
        try await expectMiss("ttl", "exactly at the expiry instant")
        clock.set(to: start.addingTimeInterval(11))
        try await expectMiss("ttl", "after the expiry instant")
    }

    func expiredEntryIsNotReturned() async throws {
        let now = clock.now
        try await set(Self.data("old"), "past")
        try await set(Self.data("new"), "past", expiresAt: now.addingTimeInterval(-1))
        try await expectMiss("past", "after setting an entry that expired 1 s ago over a live one")

        try await set(Self.data("old"), "now")
        try await set(Self.data("new"), "now", expiresAt: now)
        try await expectMiss("now", "after setting an entry that expires at this very instant")

        try await set(Self.data("old"), "zero-ttl")
        try await setValue(Self.data("new"), "zero-ttl", expiry: .after(.zero))
        try await expectMiss("zero-ttl", "after setValue with a zero TTL over a live entry")

        // Never read before the clock moves back, so a tier that kept the expired entry (or the earlier
        // value behind it) and only hid it on read cannot have dropped it lazily in the meantime.
        try await set(Self.data("old"), "unread")
        try await set(Self.data("new"), "unread", expiresAt: now.addingTimeInterval(-1))
        clock.set(to: now.addingTimeInterval(-3600))
        try await expectMiss("unread", "an already-expired entry, read after the clock moved back 1 h")
        try await expectMiss("past", "an already-expired entry read as a miss, after the clock moved back 1 h")
    }

    func readsNeverExtendExpiry() async throws {
        let start = clock.now
        let value = Self.data("fixed lifetime")
        try await setValue(value, "key", expiry: .seconds(10))
        for offset in [1.0, 5.0, 9.5] {
            clock.set(to: start.addingTimeInterval(offset))
            let found = try await expectHit("key", value, "at +\(offset) s of a 10 s TTL")
            try expectExpiry(found, start.addingTimeInterval(10), "after a read at +\(offset) s")
            _ = try await step("value(forKey:)") { try await cache.value(forKey: "key") }
            _ = try await step("contains(_:)") { try await cache.contains("key") }
        }
        clock.set(to: start.addingTimeInterval(10))
        try await expectMiss("key", "at the original expiry instant after several reads")
    }

    func clockMovingBackwardsDoesNotRevive() async throws {
        let start = clock.now
        try await setValue(Self.data("short-lived"), "key", expiry: .seconds(10))
        clock.set(to: start.addingTimeInterval(10))
        try await expectMiss("key", "at the expiry instant")
        clock.set(to: start.addingTimeInterval(5))
        try await expectMiss("key", "after the clock moved back before the expiry instant")
        let contained = try await step("contains(_:)") { try await cache.contains("key") }
        try expect(!contained, "contains(_:) revived an entry that was read as expired")
    }
}
