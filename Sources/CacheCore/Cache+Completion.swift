#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Completion-handler variants for callers that cannot `await`. Each starts an unstructured task and
// calls the completion exactly once, from that task: on a thread of Swift's global concurrent executor,
// never the main thread and never synchronously inside the call that started it. Hop to the main actor
// inside the completion when UI work follows. None of them throws: a failure arrives as `.failure` in
// the completion. The task is not tied to the caller, so cancelling the caller's task does not cancel
// the operation. Each costs what the async operation it wraps costs, plus one unstructured task.
// Calls made one after another take effect in no promised order (tasks may start in any order);
// Docs/Overview.md says so and shows how to chain dependent calls.
extension Cache {
    /// Reads the entry for `key` and calls `completion` with it (`nil` on a miss) or with the error.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - completion: Called exactly once, on a global-executor thread, with the result or with what the
    ///     async form throws.
    /// - Complexity: That of ``Cache/entry(forKey:)``, plus starting one unstructured task; returns at once.
    public func entry(
        forKey key: Key,
        completion: @escaping @Sendable (Result<CacheEntry<Value>?, any Error>) -> Void
    ) {
        Task { completion(await Result { try await self.entry(forKey: key) }) }
    }

    /// Reads the value for `key` and calls `completion` with it (`nil` on a miss) or with the error.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - completion: Called exactly once, on a global-executor thread, with the result or with what the
    ///     async form throws.
    /// - Complexity: That of ``Cache/value(forKey:)``, plus starting one unstructured task; returns at once.
    public func value(
        forKey key: Key,
        completion: @escaping @Sendable (Result<Value?, any Error>) -> Void
    ) {
        Task { completion(await Result { try await self.value(forKey: key) }) }
    }

    /// Stores `entry` under `key`, then calls `completion`.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: The key to store it under.
    ///   - completion: Called exactly once, on a global-executor thread, with the result or with what the
    ///     async form throws.
    /// - Complexity: That of ``Cache/setEntry(_:forKey:)``, plus starting one unstructured task; returns at once.
    public func setEntry(
        _ entry: CacheEntry<Value>,
        forKey key: Key,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        Task { completion(await Result { try await self.setEntry(entry, forKey: key) }) }
    }

    /// Stores `value` under `key` with `expiry`, then calls `completion`.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``Cache/clock`` right away, on the caller's
    ///     thread, before the write's task starts.
    ///   - cost: The entry's cost, in the tier's units, or `nil` to let the tier compute it.
    ///   - completion: Called exactly once, on a global-executor thread, with the result or with what the
    ///     async form throws.
    /// - Complexity: That of ``Cache/setEntry(_:forKey:)``, plus starting one unstructured task; returns at once.
    public func setValue(
        _ value: Value,
        forKey key: Key,
        expiry: Expiry,
        cost: Int? = nil,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        let entry = CacheEntry(value: value, expiresAt: expiry.expirationDate(from: clock.now), cost: cost)
        setEntry(entry, forKey: key, completion: completion)
    }

    /// Removes the entry for `key`, then calls `completion`.
    ///
    /// - Parameters:
    ///   - key: The key to remove.
    ///   - completion: Called exactly once, on a global-executor thread, with the result or with what the
    ///     async form throws.
    /// - Complexity: That of ``Cache/removeEntry(forKey:)``, plus starting one unstructured task; returns at once.
    public func removeEntry(
        forKey key: Key,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        Task { completion(await Result { try await self.removeEntry(forKey: key) }) }
    }

    /// Removes every entry, then calls `completion`.
    ///
    /// - Parameter completion: Called exactly once, on a global-executor thread, with the result or with
    ///   what ``Cache/removeAll()`` throws.
    /// - Complexity: That of ``Cache/removeAll()``, plus starting one unstructured task; returns at once.
    public func removeAll(completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        Task { completion(await Result { try await self.removeAll() }) }
    }
}

extension Result where Failure == any Error {
    /// Captures the outcome of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
