import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The rules about callers: completion handlers and concurrent tasks see what sequential async calls see.
extension ContractRun {
    func completionHandlersMatchAsync() async throws {
        let start = clock.now
        func viaCompletion<T: Sendable>(
            _ name: String, _ begin: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
        ) async throws -> T {
            let results = CompletionResults<T>()
            // Wait until the cache lets go of the handler, not just for its first call: then no later
            // call can come, so "exactly once" is decided for certain, and a handler dropped without
            // being called is reported instead of hanging the check.
            await withCheckedContinuation { (released: CheckedContinuation<Void, Never>) in
                let signal = ReleaseSignal { released.resume() }
                begin { result in
                    withExtendedLifetime(signal) { results.append(result) }
                }
            }
            let delivered = results.all
            guard delivered.count == 1 else {
                throw violation(
                    "\(name) must call its completion exactly once", expected: "1 call",
                    actual: "\(delivered.count) calls")
            }
            return try await step(name) { try delivered[0].get() }
        }

        // Given a miss, the completion variants report a miss too.
        let missingValue: Data? = try await viaCompletion("value(forKey:completion:) on a miss") {
            cache.value(forKey: "missing", completion: $0)
        }
        try expect(missingValue == nil, "value(forKey:completion:) returned a value on a miss")
        let missingEntry: CacheEntry<Data>? = try await viaCompletion("entry(forKey:completion:) on a miss") {
            cache.entry(forKey: "missing", completion: $0)
        }
        try expect(missingEntry == nil, "entry(forKey:completion:) returned an entry on a miss")

        // A write through a completion handler is what an async read sees.
        let first = CacheEntry(value: Self.data("via completion"), expiresAt: start.addingTimeInterval(60))
        try await viaCompletion("setEntry(_:forKey:completion:)") {
            cache.setEntry(first, forKey: "c1", completion: $0)
        }
        let firstRead = try await expectHit("c1", first.value, "after setEntry(_:forKey:completion:)")
        try expectExpiry(firstRead, first.expiresAt, "after setEntry(_:forKey:completion:)")

        // An async write is what the completion reads see.
        let second = Self.data("via async")
        try await set(second, "c2", expiresAt: start.addingTimeInterval(90))
        let asyncEntry = try await expectHit("c2", second, "after an async setEntry")
        let completionEntry: CacheEntry<Data>? = try await viaCompletion("entry(forKey:completion:)") {
            cache.entry(forKey: "c2", completion: $0)
        }
        if completionEntry?.value != asyncEntry.value || completionEntry?.expiresAt != asyncEntry.expiresAt {
            throw violation(
                "entry(forKey:completion:) differs from entry(forKey:)",
                expected: "\(Self.describe(asyncEntry.value)), expiring \(describe(asyncEntry.expiresAt))",
                actual: completionEntry.map { "\(Self.describe($0.value)), expiring \(describe($0.expiresAt))" }
                    ?? "nil (a miss)")
        }
        let completionValue: Data? = try await viaCompletion("value(forKey:completion:)") {
            cache.value(forKey: "c2", completion: $0)
        }
        if completionValue != second {
            throw violation(
                "value(forKey:completion:) differs from value(forKey:)", expected: Self.describe(second),
                actual: completionValue.map(Self.describe) ?? "nil (a miss)")
        }

        // A relative expiry given to the completion variant is resolved against the cache's clock.
        try await viaCompletion("setValue(_:forKey:expiry:completion:)") {
            cache.setValue(Self.data("ttl"), forKey: "c3", expiry: .seconds(10), completion: $0)
        }
        let ttlEntry = try await expectHit("c3", Self.data("ttl"), "after setValue(_:forKey:expiry:completion:)")
        try expectExpiry(ttlEntry, start.addingTimeInterval(10), "after setValue(_:forKey:expiry:completion:)")

        try await viaCompletion("removeEntry(forKey:completion:)") { cache.removeEntry(forKey: "c1", completion: $0) }
        try await expectMiss("c1", "after removeEntry(forKey:completion:)")
        try await expectHit("c2", second, "after removeEntry(forKey:completion:) of another key")

        try await viaCompletion("removeAll(completion:)") { cache.removeAll(completion: $0) }
        try await expectMiss("c2", "after removeAll(completion:)")
        try await expectMiss("c3", "after removeAll(completion:)")
    }

    func concurrentSetsOnDistinctKeys() async throws {
        let keys = (0..<100).map { "concurrent-\($0)" }
        let cache = self.cache
        let failures = await withTaskGroup(of: String?.self) { group in
            for key in keys {
                group.addTask {
                    do {
                        try await cache.setEntry(CacheEntry(value: Self.data("value of \(key)")), forKey: key)
                        return nil
                    } catch {
                        return "\(key): \(error)"
                    }
                }
            }
            var failures: [String] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        if let firstFailure = failures.first {
            throw violation("\(failures.count) of 100 concurrent sets threw; the first: \(firstFailure)")
        }
        // Read back concurrently as well, then check each result on this task.
        let reads = try await withThrowingTaskGroup(of: (String, Data?).self) { group in
            for key in keys { group.addTask { (key, try await cache.value(forKey: key)) } }
            var reads: [String: Data?] = [:]
            for try await (key, value) in group { reads[key] = value }
            return reads
        }
        for key in keys {
            let expected = Self.data("value of \(key)")
            let actual = reads[key] ?? nil
            if actual != expected {
                throw violation(
                    "a key set from a concurrent task reads back wrong", expected: Self.describe(expected),
                    actual: actual.map(Self.describe) ?? "nil (a miss)")
            }
        }
    }
}

/// The results one completion handler delivered, from whichever thread it ran on.
final class CompletionResults<T: Sendable>: Sendable {
    private let results = Locked<[Result<T, any Error>]>([])

    func append(_ result: Result<T, any Error>) { results.withLock { $0.append(result) } }

    var all: [Result<T, any Error>] { results.value }
}

/// Calls `onRelease` when its last reference goes away. A completion handler captures one, so the
/// check learns when the cache has released the handler for good.
final class ReleaseSignal: Sendable {
    private let onRelease: @Sendable () -> Void

    init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }

    deinit { onRelease() }
}
