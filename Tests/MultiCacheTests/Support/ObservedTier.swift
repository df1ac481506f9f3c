import CacheCore
import CacheTesting
import StrataTestSupport

/// A tier over a MemoryCache-like store that reports its calls to a `History` and yields
/// before each, so concurrent operations interleave at every tier call.
final class ObservedTier: TagRemovingCache {
    private let base: FaultInjectingCache<String, Int>
    private let history: History<String>

    init(history: History<String>, clock: ManualClock) {
        self.base = FaultInjectingCache(clock: clock)
        self.history = history
    }

    var clock: any CacheClock { base.clock }

    /// The value held for `key`, read directly (no yielding, nothing reported).
    func storedValue(forKey key: String) async throws -> Int? { try await base.value(forKey: key) }

    func entry(forKey key: String) async throws -> CacheEntry<Int>? {
        history.noteTierRead()
        // Read first, answer later, as a slow tier does: a write may land in between.
        let found = try await base.entry(forKey: key)
        await Task.yield()
        await Task.yield()
        return found
    }

    func setEntry(_ entry: CacheEntry<Int>, forKey key: String) async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.setEntry(entry, forKey: key)
    }

    func value(forKey key: String) async throws -> Int? { try await valueThroughEntry(forKey: key) }

    func setValue(_ value: Int, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    func removeEntry(forKey key: String) async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.removeEntry(forKey: key)
    }

    func removeAll() async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.removeAll()
    }

    func removeAll(taggedWith tag: String) async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.removeAll(taggedWith: tag)
    }
}
