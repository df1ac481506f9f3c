import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shared contract that every `Cache<String, Data>` conformer must keep, as runnable checks.
///
/// Each ``Check`` is one rule of the `Cache` protocol's documented contract (misses, round trips,
/// expiry, keys, completion handlers, concurrency). ``verify(_:makeCache:)`` builds a fresh cache with
/// the given factory, hands it a fresh ``ManualClock`` that the cache must use for expiry, runs the rule
/// and throws a ``ContractViolation`` when the cache breaks it. No check sleeps: time moves only through
/// the clock. Each check uses its own cache and only a handful of keys, so the suite stays fast against
/// a disk tier too.
///
/// Run it from a test target, one test case per rule:
///
/// ```swift
/// import CacheTesting
/// import MemoryCache
/// import Testing
///
/// @Test(arguments: CacheContract.Check.allCases)
/// func contract(_ check: CacheContract.Check) async throws {
///     try await CacheContract.verify(check) { clock in
///         try MemoryCache<String, Data>(countLimit: 100, clock: clock)
///     }
/// }
/// ```
///
/// The factory must return an empty cache with room for at least 100 entries of up to 4 KiB each. A
/// cache that wraps other caches runs the suite over its composition, every tier on the given clock; a
/// factory for a disk tier should use a new directory on every call (and the test remove it after).
///
/// Thread-safe: the checks share no state, so several may run at once (Swift Testing runs
/// parameterized cases in parallel).
public enum CacheContract {
    /// One rule of the contract. The raw value is the rule's short name, used in test output.
    ///
    /// A plain value; `Sendable` and thread-safe.
    public enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The cache reports the injected clock's time as its own `clock.now`.
        case usesInjectedClock
        /// A fresh cache misses on every read; removing an absent key or everything does not throw.
        case missOnEmptyCache
        /// A stored entry reads back with the same bytes and the same expiry instant (within 1 ms), and an
        /// entry without expiry reads back without one.
        case roundTripPreservesValueAndExpiry
        /// An empty `Data` is a hit whose value is empty, not a miss.
        case emptyValueIsHit
        /// Storing under an existing key replaces its value and its expiry, whatever their sizes.
        case overwriteReplaces
        /// `removeEntry(forKey:)` drops that key only; removing it again does not throw.
        case removeEntryDropsOnlyThatKey
        /// `removeAll()` drops every entry and the cache keeps working afterwards.
        case removeAllEmpties
        /// An entry with a 10 s TTL written at t is live at t + 9.999 s and gone at t + 10 s.
        case expiryBoundary
        /// An entry that is already expired when set is not returned, and it removes the earlier value.
        case expiredEntryIsNotReturned
        /// Reads do not extend an entry's expiry (no sliding expiry).
        case readsNeverExtendExpiry
        /// Canonically equivalent keys ("café" composed and decomposed) name one entry.
        case canonicallyEquivalentKeysNameOneEntry
        /// Keys that differ (in case, accents, spaces) stay separate entries.
        case distinctKeysStaySeparate
        /// 10,000-character keys round-trip and do not collide with each other.
        case longKeysRoundTrip
        /// Keys that look like paths or hold control characters and emoji round-trip and stay separate.
        case pathLikeKeysRoundTrip
        /// The completion-handler variants deliver what the async methods do, each completion once.
        case completionHandlersMatchAsync
        /// Concurrent sets on 100 distinct keys from a task group are all readable afterwards.
        case concurrentSetsOnDistinctKeys
        /// A clock that moves backwards does not revive an entry that was read as expired.
        case clockMovingBackwardsDoesNotRevive
        /// On a `TagRemovingCache` (other caches pass without a call):
        /// `removeAll(taggedWith:)` makes the entries carrying the tag misses and leaves untagged entries and
        /// entries with other tags as they were; a tagged entry that reads back carries its tags. (A tier
        /// may decline to keep tagged entries at all; it must then miss them.)
        case removeAllTaggedMissesOnlyThatTag
        /// Load-once (on a cache that hosts it, every Strata tier): ten callers that miss at once run the
        /// loader once and all get its value, which the cache then holds.
        case loadOnceRunsOnceForConcurrentCallers
        /// Load-once: a `removeEntry(forKey:)` while the loader runs keeps the loaded value out of the cache
        /// (its caller still gets it), and the next call loads again.
        case removalDuringLoadKeepsItsResultOut
        /// Bulk load-once with tags: the batch loader is asked for the missing keys only, the entries it
        /// stored carry the tags, and `removeAll(taggedWith:)` makes each of them a miss.
        case bulkLoadWithTagsThenTagRemovalMisses

        /// The rule's short name, for example `expiryBoundary`.
        public var description: String { rawValue }

        /// The rule in one sentence, for documentation and logs.
        public var summary: String {
            switch self {
            case .usesInjectedClock: "the cache's clock reads the injected clock's time"
            case .missOnEmptyCache: "a fresh cache misses on every read"
            case .roundTripPreservesValueAndExpiry: "a stored entry reads back with its value and expiry"
            case .emptyValueIsHit: "an empty value is a hit, not a miss"
            case .overwriteReplaces: "storing under an existing key replaces value and expiry"
            case .removeEntryDropsOnlyThatKey: "removing a key drops only that key"
            case .removeAllEmpties: "removing everything empties the cache, which keeps working"
            case .expiryBoundary: "an entry is live before its expiry instant and gone at it"
            case .expiredEntryIsNotReturned: "an already-expired entry is not returned and removes the old one"
            case .readsNeverExtendExpiry: "reads never extend expiry"
            case .canonicallyEquivalentKeysNameOneEntry: "canonically equivalent keys name one entry"
            case .distinctKeysStaySeparate: "distinct keys stay separate"
            case .longKeysRoundTrip: "10,000-character keys round-trip without colliding"
            case .pathLikeKeysRoundTrip: "path-like, control-character and emoji keys round-trip"
            case .completionHandlersMatchAsync: "completion handlers match async results, each called once"
            case .concurrentSetsOnDistinctKeys: "concurrent sets on distinct keys are all kept"
            case .removeAllTaggedMissesOnlyThatTag: "removing a tag misses exactly the entries that carry it"
            case .clockMovingBackwardsDoesNotRevive: "a clock moving backwards does not revive an expired entry"
            case .loadOnceRunsOnceForConcurrentCallers: "concurrent callers of one missing key run its loader once"
            case .removalDuringLoadKeepsItsResultOut: "a removal during a load keeps the loaded value out"
            case .bulkLoadWithTagsThenTagRemovalMisses: "a bulk load with tags is undone by removing the tag"
            }
        }
    }

    /// Checks one rule against a fresh cache.
    ///
    /// Calls `makeCache` once with a new ``ManualClock`` (reading ``ManualClock/defaultStart``), which the
    /// cache must use as its clock, then exercises the rule. Errors the cache throws are reported as
    /// violations naming the operation that threw.
    ///
    /// - Parameters:
    ///   - check: The rule to check.
    ///   - makeCache: Creates an empty cache that uses the given clock.
    /// - Throws: ``ContractViolation`` when the cache breaks the rule, throws unexpectedly, or the factory
    ///   fails; `CancellationError` when the calling task is cancelled.
    /// - Complexity: A few dozen cache operations (a few hundred for
    ///   ``Check/concurrentSetsOnDistinctKeys``).
    public static func verify(
        _ check: Check,
        makeCache: @Sendable (ManualClock) async throws -> any Cache<String, Data>
    ) async throws {
        let clock = ManualClock()
        let cache: any Cache<String, Data>
        do {
            cache = try await makeCache(clock)
        } catch {
            try Task.checkCancellation()
            throw ContractViolation(
                check: check, message: "the factory threw before the check ran", underlyingError: error)
        }
        let run = ContractRun(check: check, cache: cache, clock: clock)
        do {
            try await run.perform()
        } catch let violation as ContractViolation {
            try Task.checkCancellation()
            throw violation
        } catch {
            try Task.checkCancellation()
            throw ContractViolation(check: check, message: "unexpected error", underlyingError: error)
        }
    }

    /// Checks several rules, each against its own fresh cache, and reports every rule that was broken.
    ///
    /// Prefer one `@Test(arguments: CacheContract.Check.allCases)` case per rule in a test target, so
    /// each failure is reported on its own; this method suits a quick self-check or a playground.
    ///
    /// ```swift
    /// try await CacheContract.verifyAll { clock in MyCache(clock: clock) }
    /// ```
    ///
    /// - Parameters:
    ///   - checks: The rules to check, in order; all of them by default.
    ///   - makeCache: Creates an empty cache that uses the given clock; called once per rule.
    /// - Throws: ``ContractViolations`` listing every broken rule when at least one was broken;
    ///   `CancellationError` when the calling task is cancelled.
    /// - Complexity: O(n) ``verify(_:makeCache:)`` calls for n checks, run one after another.
    public static func verifyAll(
        _ checks: [Check] = Check.allCases,
        makeCache: @Sendable (ManualClock) async throws -> any Cache<String, Data>
    ) async throws {
        var violations: [ContractViolation] = []
        for check in checks {
            do {
                try await verify(check, makeCache: makeCache)
            } catch let violation as ContractViolation {
                violations.append(violation)
            }
        }
        if !violations.isEmpty {
            throw ContractViolations(violations)
        }
    }
}
