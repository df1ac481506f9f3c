import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The plain dictionary behind the test doubles when they are not given a cache to wrap.
///
/// Unlimited and unordered on purpose: the doubles test the code that uses a cache, not eviction.
/// It keeps the `Cache` contract (it passes ``CacheContract``): expired entries are never returned and
/// are dropped when read, an already-expired entry is not stored and removes the earlier one. An entry
/// with a later `staleUntil` is kept until then for ``entryIncludingStale(forKey:)``, a miss for plain reads.
final class InMemoryCache<Key: Hashable & Sendable, Value: Sendable>: StaleRetainingCache, TagRemovingCache {
    let clock: any CacheClock
    private let entries = Locked<[Key: CacheEntry<Value>]>([:])

    init(clock: any CacheClock) {
        self.clock = clock
    }

    func entry(forKey key: Key) -> CacheEntry<Value>? {
        let now = clock.now
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.isExpired(at: now) {
                // Dropping it here is what keeps a clock that later moves back from reviving it.
                if !entry.isRetained(at: now) { entries[key] = nil }
                return nil
            }
            return entry
        }
    }

    func entryIncludingStale(forKey key: Key) -> CacheEntry<Value>? {
        let now = clock.now
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.isRetained(at: now) else {
                entries[key] = nil
                return nil
            }
            return entry
        }
    }

    func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) {
        let now = clock.now
        entries.withLock { entries in
            entries[key] = entry.isExpired(at: now) ? nil : entry
        }
    }

    func value(forKey key: Key) -> Value? { entry(forKey: key)?.value }

    func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) {
        setEntry(CacheEntry(value: value, expiresAt: (expiry ?? .never).expirationDate(from: clock.now)), forKey: key)
    }

    func removeEntry(forKey key: Key) {
        entries.withLock { entries in entries[key] = nil }
    }

    func removeAll() {
        entries.withLock { entries in entries.removeAll() }
    }

    /// O(*n*): a test double has no version counters; it drops every entry carrying `tag` at once.
    func removeAll(taggedWith tag: String) {
        entries.withLock { entries in entries = entries.filter { !$0.value.tags.contains(tag) } }
    }
}
