#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The load-once of a single tier (a `MemoryCache`, a `DiskCache`): the tier's ``CoordinatorStorage``,
/// created by its first load, and the three things a tier asks of it. A tier that never loads pays one
/// atomic load per write or removal (``fenced(_:_:)``) and nothing per read.
///
/// The tier's stores of loaded values and its writes and removals all go through the synchronous gate
/// (`CoordinatorStorage+Synchronous.swift`), because a `MemoryCache`'s removals cannot await.
///
/// Thread-safe.
@usableFromInline
package struct TierLoadOnce<Key: Hashable & Sendable, Value: Sendable>: ~Copyable, Sendable {
    @usableFromInline let coordinator = LazyReference<CoordinatorStorage<Key, Value>>()

    /// Whether the tier has loaded, so that its writes and removals must fence; inlinable, so a write of
    /// a tier that never loads checks it without a call.
    @inlinable
    package var isActive: Bool { coordinator.ifCreated != nil }

    /// No coordinator yet.
    package init() {}

    // The tier is going away: nothing it started in the background (a refresh, a load whose callers timed
    // out) may go on without it.
    deinit {
        coordinator.ifCreated?.cancelBackgroundLoads()
    }

    /// The coordinator, created now if the tier has not loaded before.
    package var storage: CoordinatorStorage<Key, Value> { coordinator.object { CoordinatorStorage() } }

    /// The load-once read of ``CoordinatorStorage/value(forKey:read:recheck:load:store:)``, with `read`
    /// also the read made again before a loader runs (a failure then counts as a miss).
    ///
    /// - Parameters:
    ///   - store: Stores a loaded value through ``CoordinatorStorage/storeLoadedValueAtOnce(ofLoad:_:)``,
    ///     given the coordinator and the load's id.
    package func value(
        forKey key: Key,
        read: @escaping @Sendable () async throws -> Value?,
        load: @escaping @Sendable () async throws -> Value,
        store: @escaping @Sendable (CoordinatorStorage<Key, Value>, _ loadID: UInt64, Value) async -> Void
    ) async throws -> Value {
        let storage = storage
        return try await storage.value(
            forKey: key, read: read, recheck: { try? await read() }, load: load,
            store: { loadID, value in await store(storage, loadID, value) })
    }

    /// Runs `body`, a write or removal of `key` (every key when `nil`), fenced against loads in flight once
    /// the tier has loaded; before its first load, just runs it.
    package func fenced(_ key: Key?, _ body: () throws -> Void) rethrows {
        guard let storage = coordinator.ifCreated else { return try body() }
        try storage.fencedAtOnce(key, body)
    }

    /// Sets `statistics`' `loads` and `loadsShared` from the coordinator, if there is one.
    package func count(into statistics: inout CacheStatistics) {
        guard let storage = coordinator.ifCreated else { return }
        statistics.loads = storage.loads
        statistics.loadsShared = storage.sharedJoins
    }

    /// The load-once read with options of ``CoordinatorStorage/value(forKey:options:clock:expiry:read:recheck:load:store:)``
    /// (which checks the options, for every tier);
    /// `recheck` is the fresh-only read made again before a loader runs (a failure then counts as a miss).
    ///
    /// - Parameters:
    ///   - store: Stores a loaded value through ``CoordinatorStorage/storeLoadedValueAtOnce(ofLoad:_:)``,
    ///     given the coordinator and the load's id; holds the tier weakly.
    package func value(
        forKey key: Key,
        options: LoadOptions,
        clock: any CacheClock,
        expiry: Expiry,
        read: () async throws -> CacheEntry<Value>?,
        recheck: @escaping @Sendable () async throws -> Value?,
        load: @escaping @Sendable () async throws -> Value,
        store: @escaping @Sendable (CoordinatorStorage<Key, Value>, _ loadID: UInt64, Value) async -> Void
    ) async throws -> Value {
        let storage = storage
        return try await storage.value(
            forKey: key, options: options, clock: clock, expiry: expiry, read: read,
            recheck: { try? await recheck() }, load: load,
            store: { [weak storage] loadID, value in
                guard let storage else { return }
                await store(storage, loadID, value)
            })
    }

    /// The bulk load-once read of ``CoordinatorStorage/values(forKeys:read:recheck:loadBatch:store:)``.
    package func values(
        forKeys keys: [Key],
        read: ([Key]) async throws -> [Key: Value],
        recheck: @escaping @Sendable (Key) async throws -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        store: @escaping @Sendable (CoordinatorStorage<Key, Value>, _ loadID: UInt64, Key, Value) async -> Void
    ) async throws -> [Key: Value] {
        let storage = storage
        return try await storage.values(
            forKeys: keys, read: read, recheck: { key in try? await recheck(key) }, loadBatch: loadBatch,
            store: { [weak storage] loadID, key, value in
                guard let storage else { return }
                await store(storage, loadID, key, value)
            })
    }
}
