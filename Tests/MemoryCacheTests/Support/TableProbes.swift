import CacheCore

@testable import MemoryCache

// Direct uses of one table of `Int` keys and values (value = key), for probes below the cache's API.

func store(_ key: Int, cost: Int = 1, in table: ShardTable<Int, Int>) {
    _ = table.store(key, forKey: key, cost: cost, expiresAt: .infinity, now: 0)
}

/// The value a hit returns, `nil` for a miss; counts as a use of the entry.
func read(_ key: Int, in table: ShardTable<Int, Int>) -> Int? {
    var value: Int?
    var expiresAt = 0.0
    var cost = 0
    var tagStamp: TagStamp?
    let status = table.readWithoutClock(
        key, wantsCost: false, value: &value, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp)
    return status == .hit ? value : nil
}

/// Whether the table holds `key`, without using the entry.
func holds(_ key: Int, in table: ShardTable<Int, Int>) -> Bool { table.index[key] != nil }
