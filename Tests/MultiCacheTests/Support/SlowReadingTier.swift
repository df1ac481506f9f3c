import CacheCore
import CacheTesting

/// A tier whose reads take a while, as a disk or network read does: a read looks its entry up at once,
/// then parks in ``latch`` (while the test holds `.entry` there) before it answers. A write that lands
/// in between is not in the answer, so a test can make a caller miss "before" a write without sleeping.
final class SlowReadingTier<Value: Sendable>: TagRemovingCache {
    /// Where entries live; writes and removals go straight here (and can be held or failed here).
    let storage: FaultInjectingCache<String, Value>
    /// What a read waits on after its lookup; only its `.entry` hold is used.
    let latch: FaultInjectingCache<String, Value>

    init(clock: ManualClock) {
        storage = FaultInjectingCache(clock: clock)
        latch = FaultInjectingCache(clock: clock)
    }

    var clock: any CacheClock { storage.clock }

    func entry(forKey key: String) async throws -> CacheEntry<Value>? {
        let found = try await storage.entry(forKey: key)
        _ = try await latch.entry(forKey: key)
        return found
    }

    func setEntry(_ entry: CacheEntry<Value>, forKey key: String) async throws {
        try await storage.setEntry(entry, forKey: key)
    }

    func value(forKey key: String) async throws -> Value? { try await valueThroughEntry(forKey: key) }

    func setValue(_ value: Value, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    func removeEntry(forKey key: String) async throws { try await storage.removeEntry(forKey: key) }

    func removeAll() async throws { try await storage.removeAll() }
    func removeAll(taggedWith tag: String) async throws { try await storage.removeAll(taggedWith: tag) }
}
