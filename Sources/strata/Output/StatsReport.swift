import DiskCache
import RedisCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// `value` with three decimals, rounded as C's `printf("%.3f")` rounds (the binary value, to nearest):
    /// `String(format:)` is Foundation proper, so the C library's formatter is called directly.
    static func threeDecimals(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let written = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.3f", $0) }
        guard written > 0, written < buffer.count else { return String(value) }
        return String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the store has counted a hit or a miss: a ratio of no look-ups is not 0, it is undefined.
    private var hasLookups: Bool { statistics.hits > 0 || statistics.misses > 0 }

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
                ("hit ratio", hasLookups ? Self.threeDecimals(base.hitRatio) : "n/a"),
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
        ] + clusterRows(health)
    }

    /// On a Redis Cluster: the cluster's counters, then one row per node (breaker, connects, deadline misses).
    private func clusterRows(_ health: RedisCacheHealth) -> [(String, String)] {
        guard health.isCluster else { return [] }
        let nodes = health.nodes.sorted { ($0.key.host, $0.key.port) < ($1.key.host, $1.key.port) }
        return [
            ("redis cluster nodes connected", String(health.nodes.count)),
            ("redis cluster redirects", String(health.clusterRedirects)),
            ("redis cluster map reads", String(health.topologyRefreshes)),
            ("redis scoped invalidations", String(health.scopedInvalidations)),
        ]
            + nodes.map { address, node in
                (
                    "redis node \(address)",
                    "breaker \(node.isBreakerOpen ? "open" : "closed"), \(node.connects) connects, "
                        + "\(node.deadlineMisses) deadline misses"
                )
            }
    }

    /// A JSON object with the same fields under the library's names; unlimited limits are `null`. With a
    /// Redis tier, `redis` holds its address, namespace, `state` (`"answering"` or the problem) and
    /// ``RedisCacheHealth``'s counters under their names.
    var json: String {
        let base = statistics
        var object: [String: JSONValue] = [
            "store": .string(store),
            // The library's names (Docs/Overview.md, "Vocabulary"), so a script reads what an app reads.
            "count": .integer(count),
            "totalBytes": .integer(totalBytes),
            "byteLimit": maxBytes.map(JSONValue.integer) ?? .null,
            "countLimit": maxEntries.map(JSONValue.integer) ?? .null,
            "hits": .integer(base.hits),
            "misses": .integer(base.misses),
            "insertions": .integer(base.insertions),
            "evictions": .integer(base.evictions),
            "expirations": .integer(base.expirations),
            "corruptEntriesRemoved": .integer(statistics.corruptEntriesRemoved),
            "errors": .integer(statistics.errors),
            "hitRatio": hasLookups ? .number(base.hitRatio) : .null,
        ]
        if let redis {
            let health = redis.health
            object["redis"] = .object([
                "address": .string(redis.address),
                "namespace": .string(redis.namespace),
                "state": .string(redis.problem.map { $0.summary(host: redis.address) } ?? "answering"),
                "isBreakerOpen": .bool(health.isBreakerOpen),
                "connects": .integer(health.connects),
                "reconnects": .integer(health.reconnects),
                "deadlineMisses": .integer(health.deadlineMisses),
                "breakerOpenings": .integer(health.breakerOpenings),
                "rejectedWhileOpen": .integer(health.rejectedWhileOpen),
                "corruptEntries": .integer(health.corruptEntries),
                "staleEpochEntries": .integer(health.staleEpochEntries),
                "pendingWrites": redis.pendingWrites.map { .integer($0) } ?? .null,
                "isCluster": .bool(health.isCluster),
                "clusterRedirects": .integer(health.clusterRedirects),
                "topologyRefreshes": .integer(health.topologyRefreshes),
                "scopedInvalidations": .integer(health.scopedInvalidations),
                "nodes": .object(
                    Dictionary(
                        uniqueKeysWithValues: health.nodes.map { address, node in
                            (
                                address.description,
                                JSONValue.object([
                                    "isBreakerOpen": .bool(node.isBreakerOpen),
                                    "connects": .integer(node.connects),
                                    "deadlineMisses": .integer(node.deadlineMisses),
                                    "breakerOpenings": .integer(node.breakerOpenings),
                                ])
                            )
                        })),
            ])
        }
        return JSONText.render(.object(object))
    }
}
