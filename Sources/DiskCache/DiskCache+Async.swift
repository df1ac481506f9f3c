import CacheCore
import Dispatch
import Foundation

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
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` on a miss.
    /// - Throws: What the synchronous ``entry(forKey:)-7kq1c`` throws, or `CancellationError` when the
    ///   task was cancelled before the read started.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await onIOQueue { try self.entry(forKey: key) as CacheEntry<Value>? }
    }

    /// Stores `entry` under `key` without blocking the cooperative thread pool.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and optional cost.
    ///   - key: The key to store it under.
    /// - Throws: What the synchronous ``setEntry(_:forKey:)-2ffa1`` throws.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        try await onIOQueue { try self.setEntry(entry, forKey: key) as Void }
    }

    /// Removes the entry for `key` without blocking the cooperative thread pool.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: What the synchronous ``removeEntry(forKey:)-1h4bd`` throws.
    public func removeEntry(forKey key: Key) async throws {
        try await onIOQueue { try self.removeEntry(forKey: key) as Void }
    }

    /// Removes every entry (new key epoch, then deletion) without blocking the cooperative thread pool.
    ///
    /// - Throws: What the synchronous ``removeAll()-5x3jb`` throws.
    public func removeAll() async throws {
        try await onIOQueue { try self.removeAll() as Void }
    }

    /// Runs ``trim()`` on the I/O queue.
    ///
    /// - Returns: The number of entries removed.
    /// - Throws: What ``trim()`` throws.
    @discardableResult
    public func trimAsync() async throws -> Int {
        try await onIOQueue { try self.trim() }
    }
}
