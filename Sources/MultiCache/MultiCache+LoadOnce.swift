import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache {
    /// Returns the cached value for `key` or, on a miss in every tier, loads it once however many callers
    /// ask at the same time, stores it in every tier, and returns it to all of them.
    ///
    /// ```swift
    /// let avatar = try await cache.value(forKey: userID, expiry: .seconds(600)) {
    ///     try await api.fetchAvatar(userID)
    /// }
    /// ```
    ///
    /// The first caller to miss starts the load on a task of its own; callers that miss while it runs
    /// join it instead of loading again. The value is stored in every tier (each copy capped by the tier's
    /// ``Tier/maximumLifetime``) before any caller returns, so a read right after this returns is a hit.
    /// A store that fails in some tier is reported as ``CacheEvent/Kind/writeBackFailed`` and counted;
    /// the callers still get the value.
    ///
    /// - A thrown error reaches every waiter and is not cached: the next call loads again.
    /// - A cancelled caller gets `CancellationError` at once; the load goes on for the others. When every
    ///   caller has cancelled, the load's task is cancelled and its result is not stored; the next call
    ///   starts a new load.
    /// - A write or removal of `key`, or ``removeAll()``, while the load runs keeps its result out of every
    ///   tier; the callers already waiting still get the loaded value.
    /// - So does one that lands after this call began but before its load did (while the tiers were being
    ///   read, say): the tiers are read once more before the loader runs, and a value found then (the one
    ///   just written) is returned without loading; otherwise the loaded value is returned but stored in
    ///   no tier, since this call was in flight when the write or removal ran.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against ``clock`` when the load finishes; `.never` by
    ///     default (each tier still caps it at its ``Tier/maximumLifetime``). With the default, a trailing
    ///     closure is the loader: `cache.value(forKey: key) { try await fetch() }`.
    ///   - load: Produces the value on a miss; runs at most once per key at a time, on a task of its own,
    ///     never under a lock. It should honour cancellation.
    /// - Returns: The cached or loaded value; an empty value is a hit like any other.
    /// - Throws: What `load` threw; `CancellationError` when the caller's task was cancelled;
    ///   ``CacheError/Code/tierFailure`` when every tier failed to read.
    /// - Complexity: O(*t*) tier calls, where *t* is the number of tiers: the read of ``entry(forKey:)``
    ///   and, on a miss, one write per tier, concurrently; plus one run of `load` shared by every concurrent
    ///   caller of the key.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry = .never,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadValue(forKey: key, expiry: expiry, tags: [], options: LoadOptions(), orLoad: load)
    }

    /// Returns the cached or loaded value for `key` to `completion`; the completion-handler form of
    /// ``value(forKey:expiry:orLoad:)``, with the same load-once rules.
    ///
    /// The call runs on an unstructured task of its own; cancelling the caller's task does not cancel it.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry.
    ///   - load: Produces the value on a miss.
    ///   - completion: Called exactly once with the value or the error (what the async form throws), on a
    ///     thread of Swift's global concurrent executor (never synchronously inside this call, never the
    ///     main thread).
    /// - Complexity: That of ``value(forKey:expiry:orLoad:)``: O(*t*) tier calls for *t* tiers.
    ///
    /// Thread-safe: may be called from any thread.
    public func value(
        forKey key: Key,
        expiry: Expiry,
        orLoad load: @escaping @Sendable () async throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        Task {
            do {
                completion(.success(try await self.value(forKey: key, expiry: expiry, orLoad: load)))
            } catch {
                completion(.failure(error))
            }
        }
    }
}
