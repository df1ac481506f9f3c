import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One run of one contract check: the cache under test, its clock, and the helpers that turn a wrong
/// result or an unexpected error into a ``ContractViolation`` naming the step.
struct ContractRun: Sendable {
    let check: CacheContract.Check
    let cache: any Cache<String, Data>
    let clock: ManualClock
    /// The clock's reading when the run began; instants in messages are shown relative to it.
    let origin: Date

    init(check: CacheContract.Check, cache: any Cache<String, Data>, clock: ManualClock) {
        self.check = check
        self.cache = cache
        self.clock = clock
        self.origin = clock.now
    }

    /// Disk tiers may store instants with millisecond precision.
    static let expiryTolerance: TimeInterval = 0.001

    func perform() async throws {
        switch check {
        case .usesInjectedClock: try await usesInjectedClock()
        case .missOnEmptyCache: try await missOnEmptyCache()
        case .roundTripPreservesValueAndExpiry: try await roundTripPreservesValueAndExpiry()
        case .emptyValueIsHit: try await emptyValueIsHit()
        case .overwriteReplaces: try await overwriteReplaces()
        case .removeEntryDropsOnlyThatKey: try await removeEntryDropsOnlyThatKey()
        case .removeAllEmpties: try await removeAllEmpties()
        case .expiryBoundary: try await expiryBoundary()
        case .expiredEntryIsNotReturned: try await expiredEntryIsNotReturned()
        case .readsNeverExtendExpiry: try await readsNeverExtendExpiry()
        case .canonicallyEquivalentKeysNameOneEntry: try await canonicallyEquivalentKeysNameOneEntry()
        case .distinctKeysStaySeparate: try await distinctKeysStaySeparate()
        case .longKeysRoundTrip: try await longKeysRoundTrip()
        case .pathLikeKeysRoundTrip: try await pathLikeKeysRoundTrip()
        case .completionHandlersMatchAsync: try await completionHandlersMatchAsync()
        case .concurrentSetsOnDistinctKeys: try await concurrentSetsOnDistinctKeys()
        case .clockMovingBackwardsDoesNotRevive: try await clockMovingBackwardsDoesNotRevive()
        case .removeAllTaggedMissesOnlyThatTag: try await removeAllTaggedMissesOnlyThatTag()
        case .loadOnceRunsOnceForConcurrentCallers: try await loadOnceRunsOnceForConcurrentCallers()
        case .removalDuringLoadKeepsItsResultOut: try await removalDuringLoadKeepsItsResultOut()
        case .bulkLoadWithTagsThenTagRemovalMisses: try await bulkLoadWithTagsThenTagRemovalMisses()
        }
    }

    // MARK: - Violations

    func violation(
        _ message: String, expected: String? = nil, actual: String? = nil, error: (any Error)? = nil
    ) -> ContractViolation {
        ContractViolation(check: check, message: message, expected: expected, actual: actual, underlyingError: error)
    }

    /// Runs one cache operation, reporting a thrown error as a violation that names the operation.
    func step<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            try Task.checkCancellation()
            throw violation("\(operation) threw", error: error)
        }
    }

    // MARK: - Cache operations

    func entry(_ key: String) async throws -> CacheEntry<Data>? {
        try await step("entry(forKey: \(Self.describe(key)))") { try await cache.entry(forKey: key) }
    }

    func set(_ value: Data, _ key: String, expiresAt: Date? = nil) async throws {
        try await step("setEntry(_:forKey: \(Self.describe(key)))") {
            try await cache.setEntry(CacheEntry(value: value, expiresAt: expiresAt), forKey: key)
        }
    }

    func setValue(_ value: Data, _ key: String, expiry: Expiry) async throws {
        try await step("setValue(_:forKey: \(Self.describe(key)), expiry: \(expiry))") {
            try await cache.setValue(value, forKey: key, expiry: expiry)
        }
    }

    func remove(_ key: String) async throws {
        try await step("removeEntry(forKey: \(Self.describe(key)))") { try await cache.removeEntry(forKey: key) }
    }

    func removeAll() async throws {
        try await step("removeAll()") { try await cache.removeAll() }
    }

    // MARK: - Expectations

    /// Fails unless `key` misses, through `entry(forKey:)`.
    func expectMiss(_ key: String, _ context: String) async throws {
        if let found = try await entry(key) {
            throw violation(
                "\(context): \(Self.describe(key)) should miss", expected: "nil (a miss)",
                actual: Self.describe(found.value))
        }
    }

    /// Fails unless `key` hits with `value`; returns the entry for further checks.
    @discardableResult
    func expectHit(_ key: String, _ value: Data, _ context: String) async throws -> CacheEntry<Data> {
        guard let found = try await entry(key) else {
            throw violation(
                "\(context): \(Self.describe(key)) should hit", expected: Self.describe(value), actual: "nil (a miss)")
        }
        guard found.value == value else {
            throw violation(
                "\(context): \(Self.describe(key)) returned the wrong value", expected: Self.describe(value),
                actual: Self.describe(found.value))
        }
        return found
    }

    /// Fails unless `entry` expires at `expected` (within ``expiryTolerance``), or never when `nil`.
    func expectExpiry(_ entry: CacheEntry<Data>, _ expected: Date?, _ context: String) throws {
        switch (entry.expiresAt, expected) {
        case (nil, nil):
            return
        case (let actual?, let expected?) where abs(actual.timeIntervalSince(expected)) <= Self.expiryTolerance:
            return
        default:
            throw violation(
                "\(context): wrong expiry instant", expected: describe(expected), actual: describe(entry.expiresAt))
        }
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw violation(message()) }
    }

    // MARK: - Descriptions

    /// An instant relative to the clock's start, which reads better than a full date in a log.
    func describe(_ date: Date?) -> String {
        guard let date else { return "never" }
        let offset = date.timeIntervalSince(origin)
        return "\(date) (start \(offset >= 0 ? "+" : "")\(offset) s)"
    }

    static func describe(_ data: Data) -> String {
        let bytes = data.count == 1 ? "1 byte" : "\(data.count) bytes"
        if data.count <= 40, let text = String(data: data, encoding: .utf8) {
            return "\(bytes) \(text.debugDescription)"
        }
        return bytes
    }

    static func describe(_ key: String) -> String {
        let count = key.count
        guard count > 40 else { return key.debugDescription }
        return "\(String(key.prefix(20)).debugDescription)… (\(count) characters)"
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }
}
