import CacheCore
import CacheTesting
import Foundation
import Testing

@Suite struct FaultInjectingCacheTests {
    struct Boom: Error, Equatable {
        let id: Int
    }

    func makeCache() -> (FaultInjectingCache<String, Data>, ManualClock) {
        let clock = ManualClock()
        return (FaultInjectingCache(clock: clock), clock)
    }

    // MARK: - Failing

    @Test func failNextFailsOneCallWithAnInjectedIOErrorThenSucceeds() async throws {
        let (cache, _) = makeCache()
        cache.failNext(.setEntry)

        let error = await #expect(throws: CacheError.self) {
            try await cache.setValue(Data("a".utf8), forKey: "k", expiry: .never)
        }
        #expect(error?.code == .io)
        #expect(error?.message == "injected failure")
        // The failed write never reached the storage.
        #expect(try await cache.value(forKey: "k") == nil)

        try await cache.setValue(Data("b".utf8), forKey: "k", expiry: .never)
        #expect(try await cache.value(forKey: "k") == Data("b".utf8))
    }

    @Test func failNextTimesFailsThatManyCallsWithTheGivenError() async throws {
        let (cache, _) = makeCache()
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never)
        cache.failNext(.entry, with: Boom(id: 7), times: 2)

        for _ in 0..<2 {
            await #expect(throws: Boom(id: 7)) { try await cache.entry(forKey: "k") }
        }
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
    }

    @Test func queuedFailuresAreThrownInTheOrderTheyWereQueued() async throws {
        let (cache, _) = makeCache()
        cache.failNext(.removeEntry, with: Boom(id: 1))
        cache.failNext(.removeEntry, with: Boom(id: 2))

        await #expect(throws: Boom(id: 1)) { try await cache.removeEntry(forKey: "k") }
        await #expect(throws: Boom(id: 2)) { try await cache.removeEntry(forKey: "k") }
        try await cache.removeEntry(forKey: "k")
    }

    @Test func failNextWithZeroTimesQueuesNothing() async throws {
        let (cache, _) = makeCache()
        cache.failNext(.removeAll, times: 0)
        cache.failNext(.removeAll, times: -3)
        try await cache.removeAll()
    }

    @Test func failAlwaysFailsEveryCallUntilStopFailing() async throws {
        let (cache, _) = makeCache()
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never)
        cache.failAlways(.removeAll, with: Boom(id: 3))

        for _ in 0..<3 {
            await #expect(throws: Boom(id: 3)) { try await cache.removeAll() }
        }
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))

        cache.stopFailing(.removeAll)
        try await cache.removeAll()
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func stopFailingAlsoDropsQueuedFailures() async throws {
        let (cache, _) = makeCache()
        cache.failNext(.entry, times: 5)
        cache.stopFailing(.entry)
        #expect(try await cache.entry(forKey: "k") == nil)
    }

    @Test func failuresApplyOnlyToTheirOperation() async throws {
        let (cache, _) = makeCache()
        cache.failAlways(.entry)
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never)
        try await cache.removeEntry(forKey: "other")
        await #expect(throws: CacheError.self) { try await cache.entry(forKey: "k") }
        #expect(try await cache.base.value(forKey: "k") == Data("v".utf8))
    }

    @Test func callCountIncludesFailedCalls() async throws {
        let (cache, _) = makeCache()
        cache.failNext(.entry)
        _ = try? await cache.entry(forKey: "a")
        _ = try await cache.entry(forKey: "a")
        #expect(cache.callCount(.entry) == 2)
        #expect(cache.callCount(.setEntry) == 0)
    }

    // MARK: - Holding

    @Test func heldCallWaitsForReleaseAndThenCompletes() async throws {
        let (cache, _) = makeCache()
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never)
        let finished = Locked(false)

        // Given reads are held, when a read starts
        cache.hold(.entry)
        let read = Task {
            let value = try await cache.value(forKey: "k")
            finished.withLock { $0 = true }
            return value
        }
        await cache.waitUntilHeld(.entry)

        // Then it is parked, not finished, and other operations still run
        #expect(cache.waitingCount(.entry) == 1)
        #expect(finished.value == false)
        try await cache.setValue(Data("w".utf8), forKey: "other", expiry: .never)

        // When released, it completes with the stored value
        cache.release(.entry)
        #expect(try await read.value == Data("v".utf8))
        #expect(cache.waitingCount(.entry) == 0)
    }

    @Test func waitUntilHeldWaitsForTheGivenNumberOfCalls() async throws {
        let (cache, _) = makeCache()
        cache.hold(.setEntry)
        let writes = (0..<3).map { index in
            Task { try await cache.setValue(Data([UInt8(index)]), forKey: "k\(index)", expiry: .never) }
        }
        await cache.waitUntilHeld(.setEntry, count: 3)
        #expect(cache.waitingCount(.setEntry) == 3)
        #expect(try await cache.base.value(forKey: "k0") == nil)

        cache.release(.setEntry)
        for write in writes { try await write.value }
        for index in 0..<3 {
            #expect(try await cache.value(forKey: "k\(index)") == Data([UInt8(index)]))
        }
    }

    @Test func waitUntilHeldReturnsAtOnceWhenEnoughCallsAreParked() async throws {
        let (cache, _) = makeCache()
        cache.hold(.removeAll)
        let wipe = Task { try await cache.removeAll() }
        await cache.waitUntilHeld(.removeAll)
        await cache.waitUntilHeld(.removeAll, count: 1)
        await cache.waitUntilHeld(.removeAll, count: 0)
        cache.release(.removeAll)
        try await wipe.value
    }

    @Test func failureArrangedWhileHeldIsThrownOnRelease() async throws {
        let (cache, _) = makeCache()
        cache.hold(.setEntry)
        let write = Task { try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never) }
        await cache.waitUntilHeld(.setEntry)

        cache.failNext(.setEntry, with: Boom(id: 9))
        cache.release(.setEntry)

        await #expect(throws: Boom(id: 9)) { try await write.value }
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func callsAfterReleaseAreNotHeld() async throws {
        let (cache, _) = makeCache()
        cache.hold(.entry)
        cache.release(.entry)
        #expect(try await cache.entry(forKey: "k") == nil)
        #expect(cache.waitingCount(.entry) == 0)
    }

    @Test func cancellingAParkedCallThrowsCancellationError() async throws {
        let (cache, _) = makeCache()
        cache.hold(.entry)
        let read = Task { try await cache.entry(forKey: "k") }
        await cache.waitUntilHeld(.entry)

        read.cancel()

        await #expect(throws: CancellationError.self) { try await read.value }
        #expect(cache.waitingCount(.entry) == 0)
        cache.release(.entry)
    }

    @Test func aCallFromACancelledTaskDoesNotPark() async throws {
        let (cache, _) = makeCache()
        cache.hold(.removeEntry)
        let removal = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.removeEntry(forKey: "k")
        }
        await #expect(throws: CancellationError.self) { try await removal.value }
        #expect(cache.waitingCount(.removeEntry) == 0)
        #expect(cache.callCount(.removeEntry) == 1)
    }

    // MARK: - Wrapping and storage

    @Test func wrapsAnotherCacheAndUsesItsClock() async throws {
        let clock = ManualClock()
        let recording = RecordingCache<String, Data>(clock: clock)
        let cache = FaultInjectingCache(wrapping: recording)
        cache.failNext(.entry)

        _ = try? await cache.entry(forKey: "a")
        try await cache.setValue(Data(), forKey: "a", expiry: .seconds(5))

        // The failed read never reached the wrapped cache; the write did, with the wrapped clock's instant.
        #expect(recording.calls == [.setEntry("a", expiresAt: clock.now.addingTimeInterval(5))])
        #expect(cache.clock.now == clock.now)
    }

    @Test func ownStorageHonoursExpiryOnTheInjectedClock() async throws {
        let (cache, clock) = makeCache()
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .seconds(10))
        clock.advance(by: 9.5)
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        clock.advance(by: 0.5)
        #expect(try await cache.value(forKey: "k") == nil)
    }
}

extension FaultInjectingCacheTests {
    @Test func waitUntilHeldReturnsEarlyWhenItsTaskIsCancelled() async throws {
        let (cache, _) = makeCache()
        cache.hold(.entry)
        let waiter = Task { await cache.waitUntilHeld(.entry, count: 5) }
        waiter.cancel()
        await waiter.value
        #expect(cache.waitingCount(.entry) == 0)
    }
}
