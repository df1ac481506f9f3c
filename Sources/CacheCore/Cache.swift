#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A store that maps keys to values, each value kept with its expiry and cost.
///
/// Every Strata tier (`MemoryCache`, `DiskCache`, `RedisCache`, `MultiCache`) conforms, so code can be written
/// against `any Cache<String, Data>` and handed whichever tier fits.
///
/// ## The contract
/// - **Entries.** The requirements read and write ``CacheEntry`` values, so an entry's absolute expiry
///   and its cost travel with it from one tier to another. ``value(forKey:)`` and
///   ``setValue(_:forKey:expiry:)`` take a bare value and an ``Expiry``.
/// - **Which overload a call picks.** ``value(forKey:)`` and ``setValue(_:forKey:expiry:)`` are
///   requirements with no default implementation, on purpose: a default in a protocol extension is an
///   exact `async` match that Swift prefers, inside `async` code, over a tier's own synchronous method,
///   so `memory.value(forKey: key)` would need an `await`. As requirements, a tier's own method is the
///   witness and hides the requirement on the concrete type: inside an `async` function
///   `memory.value(forKey: key)` calls `MemoryCache`'s synchronous method (no `try`, no `await`), while
///   `try await cache.value(forKey: key)` on an `any Cache` or a generic `C: Cache` calls the tier's
///   witness through the protocol. A conformer implements each in one line, from ``entry(forKey:)`` and
///   ``setEntry(_:forKey:)``.
/// - **Misses.** A read returns `nil` when the key is absent *or* its entry has expired; an expired
///   entry is never returned. An empty value (for example an empty `Data`) is a hit, not a miss.
/// - **Expiry.** An entry expires at the instant `expiresAt`: it is visible while `clock.now` is
///   strictly earlier and gone from that instant on. Reads never extend it.
/// - **Errors.** Operations throw ``CacheError`` (or a `CancellationError`) and never crash on bad
///   input; what one key's failure leaves behind is stated by each conformer.
/// - **Thread safety.** Conformers are `Sendable`: every method may be called from any thread or task
///   at the same time.
/// - **Completion handlers.** Each completion-handler variant runs its operation in its own task and
///   calls the completion once, on a global-executor thread. Two calls made one after another take
///   effect in no promised order; start a dependent call from the first one's completion.
/// - **Cost of a call.** The protocol promises no complexity; each conformer states its own (O(1) on
///   average for `MemoryCache`, file I/O for `DiskCache`, one call per tier for `MultiCache`).
///
/// These are the basics a conformer implements. Capabilities beyond them are protocols of their own, which a
/// `MultiCache` probes once per tier: ``TagRemovingCache`` (removal by tag), ``TagVersioningCache``,
/// ``StaleRetainingCache``, ``BulkReadingCache``, ``SynchronousCache``, ``LoadFencingCache``.
///
/// Conformers can check themselves against the shared contract with `CacheContract` from the
/// `CacheTesting` product.
public protocol Cache<Key, Value>: Sendable {
    /// The type of the keys. Keys equal under `==` name one entry in every tier.
    associatedtype Key: Hashable & Sendable
    /// The type of the stored values.
    associatedtype Value: Sendable

    /// The clock that decides this cache's expiry; relative ``Expiry`` values are resolved against it.
    var clock: any CacheClock { get }

    /// Returns the live entry for `key`, or `nil` on a miss.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, with its absolute expiry and cost, or `nil` when the key is absent or its
    ///   entry has expired.
    /// - Throws: ``CacheError`` when the tier cannot be read (for example an I/O failure); a missing,
    ///   expired or corrupt entry is a miss, not an error.
    /// - Complexity: Set by the conformer; a read may do I/O.
    func entry(forKey key: Key) async throws -> CacheEntry<Value>?

    /// Stores `entry` under `key`, replacing any earlier entry for that key.
    ///
    /// An entry that is already expired is not stored, and removes the earlier one.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and optional cost.
    ///   - key: The key to store it under.
    /// - Throws: ``CacheError`` when the entry cannot be stored; the earlier entry, if any, is then
    ///   left as it was unless the conformer documents otherwise.
    /// - Complexity: Set by the conformer; a write may do I/O and evict other entries.
    func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws

    /// Returns the live value for `key`, or `nil` on a miss: ``entry(forKey:)`` without the expiry and
    /// cost.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key is absent or expired.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    func value(forKey key: Key) async throws -> Value?

    /// Stores `value` under `key` with an expiry resolved against ``clock`` now, replacing any earlier
    /// entry for that key; the tier computes the entry's cost.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires; a relative expiry becomes an absolute instant here, once.
    ///     `nil` for the tier's default expiry (`.never` for a tier that has none).
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: One read of ``clock`` and the cost of ``setEntry(_:forKey:)``.
    func setValue(_ value: Value, forKey key: Key, expiry: Expiry?) async throws

    /// Removes the entry for `key`, if there is one.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``CacheError`` when the tier cannot be changed. Removing an absent key is not an error.
    /// - Complexity: Set by the conformer.
    func removeEntry(forKey key: Key) async throws

    /// Removes every entry.
    ///
    /// - Throws: ``CacheError`` when the tier cannot be changed.
    /// - Complexity: Usually O(*n*) in the number of entries held; set by the conformer.
    func removeAll() async throws
}
