import DiskCache
import Foundation

/// What `strata stats` prints.
///
/// The counters are the store's own (persisted with it since it was created); the limits are those
/// given to this invocation (`--max-size`, `--max-entries`), `none` when unlimited.
struct StatsReport {
    var store: String
    var statistics: DiskCacheStatistics
    var configuration: DiskCacheConfiguration

    private var maxBytes: Int? { statistics.maxBytes ?? configuration.maxBytes }
    private var maxEntries: Int? { statistics.maxEntries ?? configuration.maxEntries }

    /// Aligned `name  value` lines.
    var text: String {
        let base = statistics.base
        let rows: [(String, String)] = [
            ("store", store),
            ("entries", String(base.count)),
            ("bytes", String(base.totalCost)),
            ("max size", maxBytes.map(String.init) ?? "none"),
            ("max entries", maxEntries.map(String.init) ?? "none"),
            ("hits", String(base.hits)),
            ("misses", String(base.misses)),
            ("hit ratio", String(format: "%.3f", base.hitRatio)),
            ("insertions", String(base.insertions)),
            ("evictions", String(base.evictions)),
            ("expirations", String(base.expirations)),
            ("corrupt removed", String(statistics.corruptEntriesRemoved)),
        ]
        return rows.map { name, value in
            name + String(repeating: " ", count: 17 - name.count) + value + "\n"
        }.joined()
    }

    /// A JSON object with the same fields in lower camel case; unlimited limits are `null`.
    var json: String {
        let base = statistics.base
        let object: [String: Any] = [
            "store": store,
            "entries": base.count,
            "bytes": base.totalCost,
            "maxBytes": maxBytes.map { $0 as Any } ?? NSNull(),
            "maxEntries": maxEntries.map { $0 as Any } ?? NSNull(),
            "hits": base.hits,
            "misses": base.misses,
            "insertions": base.insertions,
            "evictions": base.evictions,
            "expirations": base.expirations,
            "corruptEntriesRemoved": statistics.corruptEntriesRemoved,
        ]
        return JSONText.render(object)
    }
}
