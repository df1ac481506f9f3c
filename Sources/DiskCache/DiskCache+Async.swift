import CacheCore
import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The queue that runs the `async` methods' file I/O, so it never blocks the cooperative thread pool.
/// Concurrent: independent reads and writes proceed in parallel; each call's work is synchronous.
let diskCacheIOQueue = DispatchQueue(label: "strata.diskcache.io", qos: .userInitiated, attributes: .concurrent)

/// Runs `body` on ``diskCacheIOQueue`` and resumes with its result.
func onIOQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try Task.checkCancellation()
    return try await withCheckedThrowingContinuation { continuation in
        diskCacheIOQueue.async { continuation.resume(with: Result { try body() }) }
    }
}

extension DiskCache {
    // MARK: - Async API (file I/O off the cooperative pool)

    /// Reads the live entry for `key` without blocking the cooperative thread pool.
    ///
    /// The file I/O runs on a concurrent dispatch queue owned by the module; the calling task suspends
    /// meanwhile. Cancellation is checked once, before the work is queued; a read already queued runs to
    /// the end.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` on a miss.
    /// - Throws: What the synchronous `entry(forKey:)` throws, or `CancellationError` when the
    ///   task was cancelled before the read started.
    /// - Complexity: That of the synchronous `entry(forKey:)` (file I/O, O(*m*) in the entry's size),
    ///   plus one hop to the I/O queue and back.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await onIOQueue { try self.entry(forKey: key) as CacheEntry<Value>? }
    }

    /// Reads the live value for `key` without blocking the cooperative thread pool.
    ///
    /// Declared here, beside the synchronous `value(forKey:)`, so that `try await disk.value(forKey:)` in
    /// `async` code runs its file I/O on the I/O queue rather than on the calling thread.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` on a miss.
    /// - Throws: What the async `entry(forKey:)` throws.
    /// - Complexity: That of `entry(forKey:)`.
    public func value(forKey key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    /// Stores `entry` under `key` without blocking the cooperative thread pool.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and optional cost.
    ///   - key: The key to store it under.
    /// - Throws: What the synchronous `setEntry(_:forKey:)` throws, or `CancellationError` when the task
    ///   was cancelled before the write started (nothing is written then).
    /// - Complexity: That of the synchronous `setEntry(_:forKey:)`, including any trim it triggers, run
    ///   on the I/O queue.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        try await onIOQueue { try self.setEntry(entry, forKey: key) as Void }
    }

    /// Stores `value` under `key` without blocking the cooperative thread pool.
    ///
    /// - Parameters:
    ///   - value: The value to store; encoded by the store's codec.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``clock`` now; `nil` means the store's
    ///     `defaultExpiry`.
    /// - Throws: What the synchronous `setValue(_:forKey:expiry:)` throws, or `CancellationError` when the
    ///   task was cancelled before the write started (nothing is written then).
    /// - Complexity: That of the synchronous `setValue(_:forKey:expiry:)`, run on the I/O queue.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await onIOQueue { try self.setValue(value, forKey: key, expiry: expiry) as Void }
    }

    /// Removes the entry for `key` without blocking the cooperative thread pool.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: What the synchronous `removeEntry(forKey:)` throws, or `CancellationError` when the task
    ///   was cancelled before the removal started.
    /// - Complexity: One `unlink`, run on the I/O queue.
    public func removeEntry(forKey key: Key) async throws {
        try await onIOQueue { try self.removeEntry(forKey: key) as Void }
    }

    /// Removes every entry (new key epoch, then deletion) without blocking the cooperative thread pool.
    ///
    /// - Throws: What the synchronous `removeAll()` throws, or `CancellationError` when the task was
    ///   cancelled before the wipe started.
    /// - Complexity: O(*n*) file deletions, run on the I/O queue.
    public func removeAll() async throws {
        try await onIOQueue { try self.removeAll() as Void }
    }

    /// Runs `trim()` on the I/O queue: the `async` twin, picked by `try await disk.trim()` in `async`
    /// code.
    ///
    /// - Returns: The number of entries removed.
    /// - Throws: What `trim()` throws, or `CancellationError` when the task was cancelled before the
    ///   trim started.
    /// - Complexity: That of `trim()`: a folder scan and O(*n* log *n*) for *n* entries.
    @discardableResult
    public func trim() async throws -> Int {
        try await onIOQueue { try self.trim() as Int }
    }

    /// Runs `trim(toCount:)` on the I/O queue.
    ///
    /// - Parameter count: The most entries to keep, at least 0.
    /// - Returns: The number of entries removed.
    /// - Throws: What `trim(toCount:)` throws, or `CancellationError` when the task was cancelled before
    ///   the trim started.
    /// - Complexity: That of `trim(toCount:)`.
    @discardableResult
    public func trim(toCount count: Int) async throws -> Int {
        try await onIOQueue { try self.trim(toCount: count) as Int }
    }

    /// Runs `trim(toBytes:)` on the I/O queue.
    ///
    /// - Parameter bytes: The target size in bytes, at least 0.
    /// - Returns: The number of entries removed.
    /// - Throws: What `trim(toBytes:)` throws, or `CancellationError` when the task was cancelled before
    ///   the trim started.
    /// - Complexity: That of `trim(toBytes:)`.
    @discardableResult
    public func trim(toBytes bytes: Int) async throws -> Int {
        try await onIOQueue { try self.trim(toBytes: bytes) as Int }
    }
}
