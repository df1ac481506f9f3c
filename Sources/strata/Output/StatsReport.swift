import DiskCache
import Foundation

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

    private var maxBytes: Int? { configuration.byteLimit }
    private var maxEntries: Int? { configuration.countLimit }

    /// Aligned `name  value` lines.
    var text: String {
        let base = statistics
        let rows: [(String, String)] = [
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
        ]
        return rows.map { name, value in
            name + String(repeating: " ", count: 17 - name.count) + value + "\n"
        }.joined()
    }

    /// A JSON object with the same fields under the library's names; unlimited limits are `null`.
    var json: String {
        let base = statistics
        let object: [String: Any] = [
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
        return JSONText.render(object)
    }
}
