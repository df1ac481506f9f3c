import CacheCore
import DiskCache
import Foundation

/// `clear`, `ls`, `stats`, `trim` and `verify`: commands on the whole store.
struct StoreCommands {
    var store: DiskCache<String, Data>
    var storePath: String
    /// The configuration whose limits `stats` shows: the invocation's, even when the store was opened
    /// without them.
    var limits: DiskCacheConfiguration? = nil
    /// The store's tiers, for the Redis tier under the store if any.
    var shared: SharedTier? = nil
    /// Seconds `verify` and `clear` run before their progress line appears on a terminal
    /// (`STRATA_PROGRESS_DELAY`, a test-only setting; 1 by default).
    var progressDelay: Double = 1

    /// `strata clear`: rotates the key epoch, then deletes every entry.
    ///
    /// Progress goes to stderr only when stderr is a terminal and the deletion has run for over a second.
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the wipe fails.
    func clear() throws(CLIFailure) -> Int32 {
        let progress = progressLine(verb: "clearing")
        defer { progress.finish() }
        try storeCall { try store.removeAll(progress: progress.update) }
        try storeCall { try shared?.removeAllInRedis() }
        return ExitStatus.success
    }

    /// `strata ls [--json]`: one line (or JSON object) per live entry, sorted by key.
    ///
    /// - Parameter json: Print a JSON array instead of text.
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the store cannot be listed or stdout fails.
    func list(json: Bool) throws(CLIFailure) -> Int32 {
        let entries = try storeCall { try store.listEntries() }.sorted { $0.key < $1.key }
        let text = json ? EntryFormatting.json(entries) : EntryFormatting.text(entries)
        try printOutput(text)
        return ExitStatus.success
    }

    /// `strata stats [--json]`: entries, bytes, limits and the persisted counters; with a Redis tier, whether
    /// it answers now and its counters.
    ///
    /// - Parameter json: Print a JSON object instead of text.
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when stdout fails.
    func stats(json: Bool) throws(CLIFailure) -> Int32 {
        let report = StatsReport(
            store: storePath, statistics: store.statistics, count: store.count, totalBytes: store.totalBytes,
            configuration: limits ?? store.configuration, redis: shared?.report())
        try printOutput(json ? report.json : report.text)
        return ExitStatus.success
    }

    /// `strata trim`: removes expired entries, then evicts down to the limits.
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the store fails.
    func trim() throws(CLIFailure) -> Int32 {
        let expired = try storeCall { try store.removeExpired() }
        // The store was opened without the invocation's limits (opening with them would evict before this
        // count could see it); evict down to their low-water marks here, as the library's `trim()` does.
        let limits = limits ?? store.configuration
        let lowWater = { (limit: Int) in Int((Double(limit) * limits.lowWaterFraction).rounded(.down)) }
        var evicted = 0
        if let byteLimit = limits.byteLimit {
            evicted += try storeCall { try store.trim(toBytes: lowWater(byteLimit)) }
        }
        if let countLimit = limits.countLimit {
            evicted += try storeCall { try store.trim(toCount: lowWater(countLimit)) }
        }
        try printOutput("removed \(expired) expired, evicted \(evicted)\n")
        return ExitStatus.success
    }

    /// `strata verify`: authenticates every entry and removes the bad ones.
    ///
    /// Progress goes to stderr only when stderr is a terminal and the check has run for over a second.
    /// Expired entries and entries a tag removal ended, met on the way, are removed too, but are not "bad":
    /// they are counted as expired and do not change the status.
    ///
    /// - Returns: 0 when every entry was sound, 1 when bad entries were removed.
    /// - Throws: `CLIFailure.store` when the store cannot be listed, or when some files could not be
    ///   read (they are left in place, counted in the report, and the first is named in the error).
    func verify() throws(CLIFailure) -> Int32 {
        let progress = progressLine(verb: "verifying")
        let report = try storeCall { try store.verify(progress: progress.update) }
        progress.finish()
        // Files that could not be read are reported through the observer and skipped by the check; take
        // them from the held-back warnings so they are counted and named here, once.
        var unreadable: [CacheEvent] = []
        for event in DeferredWarnings.take() {
            if event.kind == .readFailed { unreadable.append(event) } else { DeferredWarnings.add(event) }
        }
        // Foreign items at entry names (a folder, a link, a FIFO) come as read failures too: DiskCache
        // reports them without following or deleting them.
        let unreadableCount = unreadable.count
        // An entry a tag removal ended is counted with the expired ones: its life ended as planned.
        let bad = report.issues.filter(\.isDamage)
        let expired = report.issues.count - bad.count
        var lines = bad.map { "removed \($0.path): \($0.reason)\n" }
        let checked = report.checked + unreadableCount
        let noun = checked == 1 ? "entry" : "entries"
        let unreadableNote = unreadableCount == 0 ? "" : ", \(unreadableCount) unreadable (left in place)"
        lines.append("checked \(checked) \(noun): removed \(bad.count) bad, \(expired) expired\(unreadableNote)\n")
        try printOutput(lines.joined())
        if unreadableCount > 0 {
            let others = unreadableCount > 1 ? " and \(unreadableCount - 1) more" : ""
            let event = unreadable.first
            let reason = event?.error.map { ": " + CLIFailure.reason(of: $0) } ?? ""
            let first = (event?.path ?? "an entry file") + reason
            throw .store("store \(storePath): cannot read \(first)\(others); left in place")
        }
        return bad.isEmpty ? ExitStatus.success : ExitStatus.miss
    }

    // MARK: - Helpers

    private func progressLine(verb: String) -> ProgressLine {
        ProgressLine(verb: verb, isTerminal: StandardStreams.isTerminal(STDERR_FILENO), delay: progressDelay)
    }

    private func storeCall<R>(_ body: () throws -> R) throws(CLIFailure) -> R {
        do {
            return try body()
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
    }

    private func printOutput(_ text: String) throws(CLIFailure) {
        guard StandardStreams.printOutput(text) else {
            throw .outputWriteFailed(errno: errno)
        }
    }
}
