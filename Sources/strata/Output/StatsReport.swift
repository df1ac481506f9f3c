import DiskCache
import Foundation
import RedisCache

/// What `strata stats` prints.
///
/// The counters are the store's own (persisted with it since it was created); the limits are those
/// given to this invocation (`--max-size`, `--max-entries`), `none` when unlimited.
struct StatsReport {
    var store: String
    var statistics: CacheStatistics
    /// Entry files held now.
    var count: Int
    /// Their real sizes on disk, in bytes.
    var totalBytes: Int
    var configuration: DiskCacheConfiguration
    /// The Redis tier's probe, when `--redis` (or `STRATA_REDIS_URL`) is given.
    var redis: SharedTier.Report?

    private var maxBytes: Int? { configuration.byteLimit }
    private var maxEntries: Int? { configuration.countLimit }

    /// Aligned `name  value` lines.
    var text: String {
        let base = statistics
        let rows: [(String, String)] =
            [
                ("store", store),
                ("entries", String(count)),
                ("bytes", String(totalBytes)),
                ("max size", maxBytes.map(String.init) ?? "none"),
                ("max entries", maxEntries.map(String.init) ?? "none"),
                ("hits", String(base.hits)),
                ("misses", String(base.misses)),
                ("hit ratio", String(format: "%.3f", base.hitRatio)),
                ("insertions", String(base.insertions)),
                ("evictions", String(base.evictions)),
                ("expirations", String(base.expirations)),
                ("corrupt removed", String(statistics.corruptEntriesRemoved)),
                ("errors", String(statistics.errors)),
            ] + redisRows
        // The store's rows keep their column; the longer Redis names widen it.
        let width = rows.reduce(17) { max($0, $1.0.count + 2) }
        return rows.map { name, value in
            name + String(repeating: " ", count: width - name.count) + value + "\n"
        }.joined()
    }

    /// The Redis tier's rows: address and namespace, its state now, the breaker, and its counters.
    private var redisRows: [(String, String)] {
        guard let redis else { return [] }
        let health = redis.health
        return [
            ("redis", "\(redis.address) namespace \(redis.namespace)"),
            ("redis state", redis.problem.map { $0.summary(host: redis.address) } ?? "answering"),
            ("redis breaker", health.isBreakerOpen ? "open" : "closed"),
            ("redis connects", String(health.connects)),
            ("redis reconnects", String(health.reconnects)),
            ("redis deadline misses", String(health.deadlineMisses)),
            ("redis breaker openings", String(health.breakerOpenings)),
            ("redis rejected while open", String(health.rejectedWhileOpen)),
            ("redis corrupt entries", String(health.corruptEntries)),
            ("redis stale epoch entries", String(health.staleEpochEntries)),
            ("redis pending writes", redis.pendingWrites.map(String.init) ?? "unreadable"),
        ]
    }

    /// A JSON object with the same fields under the library's names; unlimited limits are `null`. With a
    /// Redis tier, `redis` holds its address, namespace, `state` (`"answering"` or the problem) and
    /// ``RedisCacheHealth``'s counters under their names.
    var json: String {
        let base = statistics
        var object: [String: Any] = [
            "store": store,
            // The library's names (Docs/Overview.md, "Vocabulary"), so a script reads what an app reads.
            "count": count,
            "totalBytes": totalBytes,
            "byteLimit": maxBytes.map { $0 as Any } ?? NSNull(),
            "countLimit": maxEntries.map { $0 as Any } ?? NSNull(),
            "hits": base.hits,
            "misses": base.misses,
            "insertions": base.insertions,
            "evictions": base.evictions,
            "expirations": base.expirations,
            "corruptEntriesRemoved": statistics.corruptEntriesRemoved,
            "errors": statistics.errors,
            "hitRatio": base.hitRatio,
        ]
        if let redis {
            let health = redis.health
            object["redis"] =
                [
                    "address": redis.address,
                    "namespace": redis.namespace,
                    "state": redis.problem.map { $0.summary(host: redis.address) } ?? "answering",
                    "isBreakerOpen": health.isBreakerOpen,
                    "connects": health.connects,
                    "reconnects": health.reconnects,
                    "deadlineMisses": health.deadlineMisses,
                    "breakerOpenings": health.breakerOpenings,
                    "rejectedWhileOpen": health.rejectedWhileOpen,
                    "corruptEntries": health.corruptEntries,
                    "staleEpochEntries": health.staleEpochEntries,
                    "pendingWrites": redis.pendingWrites.map { $0 as Any } ?? NSNull(),
                ] as [String: Any]
        }
        return JSONText.render(object)
    }
}
