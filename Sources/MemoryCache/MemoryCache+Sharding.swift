extension MemoryCache {
    /// The shard count actually used: at most the requested one, at most any non-zero limit (so every
    /// shard can hold at least one entry), and 1 when a limit of 0 makes the cache keep nothing.
    static func effectiveShardCount(_ requested: Int, countLimit: Int?, costLimit: Int?) -> Int {
        if countLimit == 0 || costLimit == 0 { return 1 }
        return min(requested, countLimit ?? Int.max, costLimit ?? Int.max)
    }

    /// Shard `shard`'s part of `limit` when it is split over `shardCount` shards: the parts differ by at
    /// most 1 and add up to exactly `limit`, so the shards together never exceed it.
    ///
    /// - Returns: The share, or `nil` when `limit` is `nil` (unlimited).
    static func share(of limit: Int?, forShard shard: Int, of shardCount: Int) -> Int? {
        guard let limit else { return nil }
        return limit / shardCount + (shard < limit % shardCount ? 1 : 0)
    }
}
