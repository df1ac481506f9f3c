import CacheCore
import Foundation
import StrataTestSupport
import Testing

private struct LoadFailure: Error, Equatable {}

/// Load-once on one `MemoryCache` or one `DiskCache`, without a `MultiCache` (issue 14): one loader call
/// per key however many callers, errors not cached, the tier's own removals fencing a load in flight, and
/// a cancelled waiter leaving the others their load. Run under ThreadSanitizer.
@Suite(.timeLimit(.minutes(10)))
struct SingleTierLoadOnceTests {
    @Test(arguments: LoadingTier.Kind.allCases)
    func hundredConcurrentCallersRunTheLoaderOnce(kind: LoadingTier.Kind) async throws {
        // Given 100 callers that all miss, and a loader held until the other 99 have joined its load
        let tier = try LoadingTier(kind)
        let gate = Gate()
        let runs = Locked(0)
        let values = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await tier.load("k") {
                        runs.withLock { $0 += 1 }
                        try await gate.wait()
                        return bytes("loaded")
                    }
                }
            }
            try await tier.events.wait(for: .joinedLoad, count: 99)
            // When the one load finishes
            gate.open()
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }

        // Then every caller got its value, the loader ran once, and the tier holds the value
        #expect(values == Array(repeating: bytes("loaded"), count: 100))
        #expect(runs.value == 1)
        #expect(tier.statistics().loads == 1)
        #expect(tier.statistics().loadsShared == 99)
        #expect(try await tier.read("k") == bytes("loaded"))
        // And a later call is a hit that runs no loader
        #expect(try await tier.load("k") { bytes("other") } == bytes("loaded"))
        #expect(tier.statistics().loads == 1)
    }

    @Test(arguments: LoadingTier.Kind.allCases)
    func aFailedLoadReachesEveryWaiterAndIsNotCached(kind: LoadingTier.Kind) async throws {
        // Given 10 callers waiting on a load that fails
        let tier = try LoadingTier(kind)
        let gate = Gate()
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await tier.load("k") {
                            try await gate.wait()
                            throw LoadFailure()
                        }
                        return false
                    } catch is LoadFailure {
                        return true
                    }
                }
            }
            try await tier.events.wait(for: .joinedLoad, count: 9)
            gate.open()
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }

        // Then every caller got the error, nothing is stored, and the next call loads again
        #expect(failures == 10)
        #expect(try await tier.read("k") == nil)
        #expect(try await tier.load("k") { bytes("second") } == bytes("second"))
        #expect(tier.statistics().loads == 2)
        #expect(try await tier.read("k") == bytes("second"))
    }

    @Test(arguments: LoadingTier.RemovalCase.all)
    func aRemovalDuringALoadKeepsItsResultOutOfTheTier(removalCase: LoadingTier.RemovalCase) async throws {
        // Given a load held open, with a second caller waiting on it
        let tier = try LoadingTier(removalCase.kind)
        let loader = HeldLoader()
        let (first, second) = try await startLoad(on: tier, heldBy: loader, callers: 2)

        // When the tier's own removal runs during the load, and the load then finishes
        try await tier.remove(removalCase.removal, "k")
        loader.release()

        // Then both callers get the loaded value, but the tier does not hold it
        #expect(try await first.value == bytes("loaded"))
        #expect(try await second?.value == bytes("loaded"))
        #expect(try await tier.read("k") == nil)
        // And the next call loads afresh
        #expect(try await tier.load("k") { bytes("fresh") } == bytes("fresh"))
        #expect(tier.statistics().loads == 2)
    }

    @Test(arguments: LoadingTier.Kind.allCases)
    func aWriteDuringALoadIsNotOverwrittenByIt(kind: LoadingTier.Kind) async throws {
        // Given a load held open
        let tier = try LoadingTier(kind)
        let loader = HeldLoader()
        let (caller, _) = try await startLoad(on: tier, heldBy: loader, callers: 1)

        // When the key is written during the load
        try await tier.write(bytes("written"), "k")
        loader.release()

        // Then the caller gets the loaded value, and the tier keeps the written one
        #expect(try await caller.value == bytes("loaded"))
        #expect(try await tier.read("k") == bytes("written"))
    }

    @Test(arguments: LoadingTier.Kind.allCases)
    func aCancelledWaiterLeavesTheLoadToTheOthers(kind: LoadingTier.Kind) async throws {
        // Given a load held open with two callers on it
        let tier = try LoadingTier(kind)
        let loader = HeldLoader()
        let (first, second) = try await startLoad(on: tier, heldBy: loader, callers: 2)

        // When the first caller is cancelled
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        loader.release()

        // Then the second still gets the value, and the tier holds it
        #expect(try await second?.value == bytes("loaded"))
        #expect(try await tier.read("k") == bytes("loaded"))
        #expect(tier.statistics().loads == 1)
    }

    /// Starts a load of "k" that `loader` holds open (it returns "loaded" once released) and, when `callers`
    /// is 2, a second caller that has joined it; returns the first caller and the second (or `nil`).
    private func startLoad(
        on tier: LoadingTier, heldBy loader: HeldLoader, callers: Int
    ) async throws -> (Task<Data, any Error>, Task<Data, any Error>?) {
        let first = Task {
            try await tier.load("k") {
                try await loader.hold()
                return bytes("loaded")
            }
        }
        try await loader.waitUntilHeld()
        guard callers > 1 else { return (first, nil) }
        let second = Task { try await tier.load("k") { bytes("not run") } }
        try await tier.events.wait(for: .joinedLoad, count: 1)
        return (first, second)
    }
}
