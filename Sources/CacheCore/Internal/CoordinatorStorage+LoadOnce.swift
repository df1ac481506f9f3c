extension CoordinatorStorage {
    /// The load-once read every cache shares: returns what `read` finds or, on a miss, joins the key's load
    /// in flight, starting one when there is none, and returns its result.
    ///
    /// The load runs on a task of its own: it reads again first with `recheck` when the key changed since
    /// the caller's read (its miss may be stale, and a value written meanwhile is the one to return),
    /// otherwise counts a load, runs `load`, hands the value to `store` (which stores it only through
    /// ``storeLoadedValue(ofLoad:_:)`` or ``storeLoadedValueAtOnce(ofLoad:_:)``, so fences hold) and
    /// answers every waiter.
    ///
    /// - Parameters:
    ///   - key: The key to read.
    ///   - read: The cache's read of `key`; `nil` on a miss.
    ///   - recheck: The read a load makes before its loader when the key changed since the caller's read;
    ///     `nil` on a miss or a failure.
    ///   - load: The caller's loader.
    ///   - store: Stores a loaded value, given the load's id.
    /// - Throws: What `read` or the load threw; `CancellationError` when the caller's task is cancelled.
    package func value(
        forKey key: Key,
        read: () async throws -> Value?,
        recheck: @escaping @Sendable () async -> Value?,
        load: @escaping @Sendable () async throws -> Value,
        store: @escaping @Sendable (_ loadID: UInt64, _ value: Value) async -> Void
    ) async throws -> Value {
        // Noted before the read, so a write or removal that lands while it runs is seen at the join.
        let sequenceSeen = changeSequence
        if let value = try await read() { return value }
        return try await value(afterMissOf: key, sequenceSeen: sequenceSeen, recheck: recheck, load: load, store: store)
    }

    /// The second half of ``value(forKey:read:recheck:load:store:)``, for a caller that read the cache
    /// itself (a synchronous tier's fast path): joins the load of `key`, which missed in a read that began
    /// after ``changeSequence`` read `sequenceSeen`, starting one when none is in flight.
    ///
    /// - Throws: What the load threw; `CancellationError` when the caller's task is cancelled.
    package func value(
        afterMissOf key: Key,
        sequenceSeen: UInt64,
        recheck: @escaping @Sendable () async -> Value?,
        load: @escaping @Sendable () async throws -> Value,
        store: @escaping @Sendable (_ loadID: UInt64, _ value: Value) async -> Void
    ) async throws -> Value {
        try await joinLoad(of: key, sequenceSeen: sequenceSeen) { loadID, recheckTiers in
            Task {
                await self.runLoad(loadID, recheckTiers: recheckTiers, recheck: recheck, load: load, store: store)
            }
        }
    }

    /// The body of one load's task: read again if needed, run the loader, store, answer every waiter.
    private func runLoad(
        _ loadID: UInt64,
        recheckTiers: Bool,
        recheck: @Sendable () async -> Value?,
        load: @Sendable () async throws -> Value,
        store: @Sendable (UInt64, Value) async -> Void
    ) async {
        let result: Result<Value, any Error>
        if recheckTiers, let value = await recheck() {
            result = .success(value)
        } else {
            handle { $0.countLoad() }
            do {
                let value = try await load()
                result = .success(value)
                await store(loadID, value)
            } catch {
                result = .failure(error)
            }
        }
        finishLoad(loadID, with: result)
    }
}
