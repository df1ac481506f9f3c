import CacheCore
import CacheCrypto
import DiskCache
import Dispatch
import MultiCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The writes the Redis tier missed (an outage), kept beside the store so that a later `strata` run, in
/// any process, replays them once Redis answers (`MultiCache.Authority.Replay`).
///
/// The journal is one entry of a small store of its own, `<store>/pending-writes/`, sealed under the
/// store's master key like every entry (it reveals no key), never expiring, out of reach of `get`, `ls`,
/// `clear` and the store's statistics. That folder is created by the first write Redis misses; until then
/// a run that asks for the journal finds no folder and reads nothing. Each change reads, edits and writes
/// the entry under that store's lock for it (`DiskCache.withLock(forKey:)`), which several processes
/// honour.
///
/// Thread safety: every use of the journal store runs on one serial Dispatch queue (not a thread of the
/// cooperative pool), which also guards opening it.
///
/// `@unchecked Sendable` is sound: the one `var`, `opened`, is read and written only in `openIfPresent`,
/// which runs only on `queue` (from `update` through `queue.async`, from `pendingCount` through `queue.sync`),
/// a serial queue; every other stored property is a `let` of a `Sendable` type.
final class StorePendingJournal: PendingWriteJournal, @unchecked Sendable {
    typealias Key = String

    private static let key = "pending-writes"
    private let folder: URL
    private let masterKeySource: MasterKeySource
    private let queue = DispatchQueue(label: "strata.pending-writes")
    private var opened: DiskCache<String, Data>?

    /// A journal for `store`, opened at its first use.
    ///
    /// - Parameters:
    ///   - store: The local store whose Redis writes it keeps.
    ///   - masterKeySource: The store's master key, resolved to a file or key (never the default key file
    ///     of another name).
    init(store: DiskCache<String, Data>, masterKeySource: MasterKeySource) {
        folder = store.directory.appendingPathComponent("pending-writes", isDirectory: true)
        self.masterKeySource = masterKeySource
    }

    func update<Result: Sendable>(
        _ body: @escaping @Sendable (inout [PendingWrite<String>]) throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Swift.Result { try self.updateOnQueue(body) })
            }
        }
    }

    /// How many writes are pending, for `stats`; 0 without a journal, `nil` when it cannot be read.
    func pendingCount() -> Int? {
        queue.sync {
            do {
                guard let store = try openIfPresent(creating: false) else { return 0 }
                return try Self.read(store).count
            } catch {
                return nil
            }
        }
    }

    private func updateOnQueue<Result>(_ body: (inout [PendingWrite<String>]) throws -> Result) throws -> Result {
        var store = try openIfPresent(creating: false)
        if store == nil {
            // No journal yet: create it only when something is to be kept. Another process may create it
            // meanwhile, so the change is made again below, under the lock, on what the journal then holds
            // (`body` depends on the list alone, as PendingWriteJournal requires).
            var writes: [PendingWrite<String>] = []
            let result = try body(&writes)
            guard !writes.isEmpty else { return result }
            store = try openIfPresent(creating: true)
        }
        guard let store else { throw CacheError(.io, "the pending-writes journal could not be created") }
        return try store.withLock(forKey: Self.key) {
            var writes = try Self.read(store)
            let before = writes
            let result = try body(&writes)
            if writes != before { try Self.write(writes, to: store) }
            return result
        }
    }

    /// The journal store; `nil` when its folder does not exist and `creating` is false. Runs on `queue`.
    private func openIfPresent(creating: Bool) throws -> DiskCache<String, Data>? {
        if let opened { return opened }
        guard creating || FileManager.default.fileExists(atPath: folder.path) else { return nil }
        let store = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: Self.key, directory: folder, masterKeySource: masterKeySource,
                observer: Self.warnAboutDamage),
            codec: .data)
        opened = store
        return store
    }

    /// Warns, on stderr, when the journal was found damaged and set aside (its database moved to quarantine,
    /// or its entry removed): the writes it held are lost, and nothing else would say so.
    private static let warnAboutDamage: CacheObserver = { event in
        guard event.kind == .corruptEntryRemoved else { return }
        StandardStreams.printError(
            "strata: warning: the journal of writes Redis missed was damaged and set aside; the writes it held are "
                + "lost and Redis will not get them: \(oneLine(event.message))")
    }

    private static func read(_ store: DiskCache<String, Data>) throws -> [PendingWrite<String>] {
        guard let data = try store.value(forKey: key) else { return [] }
        // An entry that does not decode (written by a later build, say) reads as empty: a pending write
        // lost is what happened before there was a journal, never a wrong value.
        return (try? JSONDecoder().decode([PendingWrite<String>].self, from: data)) ?? []
    }

    private static func write(_ writes: [PendingWrite<String>], to store: DiskCache<String, Data>) throws {
        if writes.isEmpty {
            try store.removeEntry(forKey: key)
        } else {
            try store.setEntry(CacheEntry(value: try JSONEncoder().encode(writes)), forKey: key)
        }
    }
}
