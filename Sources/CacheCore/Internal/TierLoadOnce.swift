#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The load-once state a ``LoadHostingCache`` keeps (a `MemoryCache`, a `DiskCache`, a `RedisCache`): its
/// ``CoordinatorStorage`` and its ``LoadHost``, both created by its first load. A tier that never loads pays
/// one atomic load per write or removal (``fenced(_:_:)``) and nothing per read.
///
/// A tier whose writes and removals are synchronous (memory, disk) stores loaded values and fences through
/// the synchronous gate (`CoordinatorStorage+Synchronous.swift`), because a `MemoryCache`'s removals cannot
/// await; a tier whose every call awaits (Redis) uses the async fence, ``fenced(_:_:)-(_,()async throws->Result)``.
///
/// Thread-safe.
@usableFromInline
package struct TierLoadOnce<Key: Hashable & Sendable, Value: Sendable>: ~Copyable, Sendable {
    @usableFromInline let coordinator = LazyReference<CoordinatorStorage<Key, Value>>()
    @usableFromInline let hostReference = LazyReference<LoadHost<Key, Value>>()

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

    /// The tier's ``LoadHost``, made with `make` (given the coordinator) by the first call; later calls
    /// return it with one atomic load, so a load-once hit pays nothing more.
    @inlinable
    package func host(
        orMake make: (CoordinatorStorage<Key, Value>) -> LoadHost<Key, Value>
    ) -> LoadHost<Key, Value> {
        if let host = hostReference.ifCreated { return host }
        return makeHost(make)
    }

    /// The slow half of ``host(orMake:)``.
    @usableFromInline
    func makeHost(_ make: (CoordinatorStorage<Key, Value>) -> LoadHost<Key, Value>) -> LoadHost<Key, Value> {
        let storage = storage
        return hostReference.object { make(storage) }
    }

    /// Runs `body`, a synchronous write or removal of `key` (every key when `nil`), fenced against loads in
    /// flight once the tier has loaded; before its first load, just runs it.
    package func fenced(_ key: Key?, _ body: () throws -> Void) rethrows {
        guard let storage = coordinator.ifCreated else { return try body() }
        try storage.fencedAtOnce(key, body)
    }

    /// Runs `body`, an awaited write or removal of `key` (every key when `nil`), fenced against loads in flight
    /// once the tier has loaded (waiting for stores of loaded values already under way); before its first
    /// load, just runs it. For a tier that stores loaded values with
    /// ``CoordinatorStorage/storeLoadedValue(ofLoad:_:)``.
    @discardableResult
    package func fenced<Result>(_ key: Key?, _ body: () async throws -> Result) async rethrows -> Result {
        guard let storage = coordinator.ifCreated else { return try await body() }
        return try await storage.fenced(key, body)
    }

    /// Sets `statistics`' `loads` and `loadsShared` from the coordinator, if there is one.
    package func count(into statistics: inout CacheStatistics) {
        guard let storage = coordinator.ifCreated else { return }
        statistics.loads = storage.loads
        statistics.loadsShared = storage.sharedJoins
    }
}
