import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A scheduler the test runs by hand: it keeps what the engine scheduled, and runs it when told.
final class ManualIdleScheduler: SQLiteIdleScheduler {
    private let pending = Locked<[(seconds: Double, work: @Sendable () -> Void)]>([])

    func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append((seconds, work)) }
    }

    /// The delays of the timers pending now, in seconds.
    var delays: [Double] { pending.withLock { $0.map(\.seconds) } }

    /// Runs every pending timer (as if each had fired); returns how many ran.
    @discardableResult
    func fireAll() -> Int {
        let due = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        for timer in due { timer.work() }
        return due.count
    }
}

/// The idle checkpoint: a while after this process's last write the WAL is truncated to zero bytes; nothing
/// is scheduled by reads; a pending timer does not keep the cache alive.
@Suite struct SQLiteEngineIdleCheckpointTests {
    let folder = TemporaryFolder(label: "sqlite-idle")
    let clock = ManualClock()

    func makeCache(_ scheduler: ManualIdleScheduler) throws -> DiskCache<String, Data> {
        let cache = try makeSQLiteCache(folder, clock: clock)
        cache.sqliteEngine.state.withLock { $0.idleScheduler = scheduler }
        return cache
    }

    var walSize: Int { fileSize(folder.store.path + "/" + SQLiteEngine.databaseName + "-wal") }

    @Test func walIsTruncatedToZeroOnceTheIdleDelayHasPassedSinceTheLastWrite() throws {
        // Given a cache that wrote a few entries, leaving them in the WAL
        let scheduler = ManualIdleScheduler()
        let cache = try makeCache(scheduler)
        for index in 0..<20 { try cache.setValue(Data(repeating: 1, count: 2_000), forKey: "key\(index)") }
        #expect(walSize > 20 * 2_000)
        // Then one timer waits for the idle delay, however many writes there were
        #expect(scheduler.delays == [SQLiteEngine.idleCheckpointDelay])

        // When it fires before the delay has passed since the last write
        clock.advance(by: SQLiteEngine.idleCheckpointDelay / 2)
        try cache.setValue(Data([2]), forKey: "late")
        clock.advance(by: SQLiteEngine.idleCheckpointDelay / 2)
        scheduler.fireAll()
        // Then nothing is checkpointed, and it waits for the rest of the delay since that last write
        #expect(walSize > 20 * 2_000)
        #expect(scheduler.delays == [SQLiteEngine.idleCheckpointDelay / 2])

        // When the delay has passed since the last write and the timer fires
        clock.advance(by: SQLiteEngine.idleCheckpointDelay / 2)
        scheduler.fireAll()
        // Then the WAL is empty, nothing more is scheduled, and every entry reads back
        #expect(walSize == 0)
        #expect(scheduler.delays.isEmpty)
        #expect(try cache.value(forKey: "key7") == Data(repeating: 1, count: 2_000))
        #expect(try cache.value(forKey: "late") == Data([2]))
    }

    @Test func readsScheduleNothing() throws {
        // Given a cache whose idle checkpoint has run after its writes
        let scheduler = ManualIdleScheduler()
        let cache = try makeCache(scheduler)
        try cache.setValue(Data([1]), forKey: "a")
        clock.advance(by: SQLiteEngine.idleCheckpointDelay)
        #expect(scheduler.fireAll() == 1)
        // When it only reads
        for _ in 0..<10 { _ = try cache.value(forKey: "a") }
        // Then no timer is pending
        #expect(scheduler.delays.isEmpty)
        #expect(cache.sqliteEngine.state.withLock { $0.idleCheckpoints } == 1)
    }

    @Test func aPendingTimerDoesNotKeepTheCacheAlive() throws {
        // Given a cache with a timer pending
        let scheduler = ManualIdleScheduler()
        weak var engine: SQLiteEngine?
        do {
            let cache = try makeCache(scheduler)
            try cache.setValue(Data([1]), forKey: "a")
            engine = cache.sqliteEngine
        }
        // When the cache is gone and the timer fires
        clock.advance(by: SQLiteEngine.idleCheckpointDelay)
        // Then the engine was released, and the timer does nothing
        #expect(engine == nil)
        #expect(scheduler.fireAll() == 1)
        #expect(scheduler.delays.isEmpty)
    }
}
