import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

extension HostileItem {
    /// The items every call below faces; the key-check record and near-overflow counters have tests of
    /// their own below.
    static let diskCases = allCases.filter { !$0.isOnCheckRecord && $0 != .statisticsOverflow }

    /// Whether the other entries survive the planting itself (a replaced entries folder takes them along).
    var keepsOtherEntries: Bool { self != .entriesFolderLink }

    /// The items a store of `engine` faces: a SQLite store has no `entries/`, `store.lock` or `store.stats`, so
    /// only the items on the folders and files it shares with the file engine apply to it.
    static func diskCases(on engine: Engine) -> [HostileItem] {
        guard engine == .sqlite else { return diskCases }
        return diskCases.filter {
            [.temporaryFolderLink, .locksFolderLink, .quarantineFolderLink, .keyLockLink, .keyLockFIFO].contains($0)
        }
    }

    /// Each engine with each item its store faces.
    static let engineCases: [(Engine, HostileItem)] = TestStore.engines.flatMap { engine in
        diskCases(on: engine).map { (engine, $0) }
    }
}

/// Every call of the public API that touches the store folder.
enum StoreCall: String, CaseIterable, Sendable {
    case open, getVictim, getOther, set, setVictim, remove, lock, statistics, flush, trim, removeExpired, verify
    case list, removeAll

    func run(_ folder: TemporaryFolder, _ cache: DiskCache<String, Data>, engine: Engine) throws {
        switch self {
        case .open: _ = try makeCache(folder, engine: engine)
        case .getVictim: _ = try cache.value(forKey: "victim")
        case .getOther: _ = try cache.value(forKey: "keep")
        case .set: try cache.setValue(Data("new".utf8), forKey: "new")
        case .setVictim: try cache.setValue(Data("again".utf8), forKey: "victim")
        case .remove: try cache.removeEntry(forKey: "victim")
        case .lock: _ = try cache.withLock(forKey: "victim") { 1 }
        case .statistics: _ = cache.statistics
        case .flush: try cache.flushStatistics()
        case .trim: _ = try cache.trim(toBytes: 1 << 30)
        case .removeExpired: _ = try cache.removeExpired()
        case .verify: _ = try cache.verify()
        case .list: _ = try cache.listEntries()
        case .removeAll: try cache.removeAll()
        }
    }
}

@Suite struct DiskCacheHostileFolderTests {
    let folder = TemporaryFolder()
    let events = EventRecorder()

    /// A store on `engine` holding "keep" and "victim" (in different fan-out folders of the file engine), and
    /// a canary beside it.
    func makeStore(_ engine: Engine = .files) throws -> (DiskCache<String, Data>, Canary, victim: String) {
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        try cache.setValue(Data("kept".utf8), forKey: "keep")
        try cache.setValue(Data("victim".utf8), forKey: "victim")
        let victim = try cache.entryName(for: "victim")
        let kept = try cache.entryName(for: "keep")
        #expect(victim.prefix(2) != kept.prefix(2), "the test keys must use two fan-out folders")
        _ = try cache.withLock(forKey: "victim") { 0 }
        return (cache, try Canary(in: folder.url), victim)
    }

    @Test(arguments: HostileItem.engineCases)
    func hostileItemNeverChangesAnythingOutsideTheStoreAndLeavesOtherEntriesReadable(
        _ engine: Engine, item: HostileItem
    ) throws {
        // Given a store with a hostile item planted in it, and a canary folder the item points at
        let (_, canary, victim) = try makeStore(engine)
        let before = canary.snapshot()
        try item.plant(store: folder.store, canary: canary, victim: victim)
        var opened: DiskCache<String, Data>?
        opened = try makeCache(folder, observer: events.observer, engine: engine)
        guard let cache = opened else {
            // A store that fails to open has still changed nothing outside it.
            #expect(canary.snapshot() == before)
            return
        }

        // When every call that touches the store runs (each may fail with an error, none may trap or hang)
        for call in StoreCall.allCases {
            _ = try? call.run(folder, cache, engine: engine)

            // Then nothing outside the store changed, and the other entry is still readable
            #expect(canary.snapshot() == before, "\(call) changed the canary through \(item)")
            if item.keepsOtherEntries && call != .removeAll {
                #expect(try cache.value(forKey: "keep") == Data("kept".utf8), "after \(call) with \(item)")
            }
        }
        // And the store works again afterwards
        try cache.setValue(Data("after".utf8), forKey: "victim")
        #expect(try cache.value(forKey: "victim") == Data("after".utf8))
        #expect(canary.snapshot() == before)
    }

    @Test(arguments: TestStore.engines)
    func temporaryFolderLinkIsMovedAsideAndItsTargetKeepsItsStaleLookingFiles(_ engine: Engine) throws {
        // Given tmp/ replaced by a link to a folder of old files named like Strata's temporary files
        let (_, canary, _) = try makeStore(engine)
        let before = canary.snapshot()
        try Plant.link(at: folder.store.appendingPathComponent("tmp").path, to: canary.url.path)

        // When the store is opened (even only to read)
        var opened: DiskCache<String, Data>?
        opened = try makeCache(folder, observer: events.observer, engine: engine)
        guard let cache = opened else {
            // A store that fails to open has still changed nothing outside it.
            #expect(canary.snapshot() == before)
            return
        }
        _ = try cache.value(forKey: "keep")

        // Then the link was moved into quarantine (not followed), a real tmp/ replaced it, and the
        // target's files are all there
        let quarantined = try FileManager.default.contentsOfDirectory(
            atPath: folder.store.appendingPathComponent("quarantine").path)
        #expect(quarantined.count == 1 && quarantined.first?.hasPrefix("tmp-") == true)
        var info = stat()
        #expect(lstat(folder.store.appendingPathComponent("tmp").path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
        #expect(canary.snapshot() == before)
        #expect(events.count(of: .corruptEntryRemoved) == 1)
    }

    @Test func fifoAtAnEntryIsAReadFailureNotAHangAndAWriteReplacesIt() throws {
        let (cache, _, victim) = try makeStore()
        try Plant.fifo(at: folder.store.path + "/entries/" + victim.prefix(2) + "/" + victim)

        // A read opens without blocking and refuses the FIFO as a foreign item, naming what it is
        #expect {
            _ = try cache.value(forKey: "victim")
        } throws: { error in
            "\(error)".contains("a FIFO, not a regular file")
        }
        // A write replaces the name (rename acts on the name, never opens the FIFO)
        try cache.setValue(Data([1]), forKey: "victim")
        #expect(try cache.value(forKey: "victim") == Data([1]))
    }

    @Test(arguments: [HostileItem.entrySparse, .entrySparseWithHeader])
    func hugeSparseEntryIsACorruptMissJudgedBeforeAnyAllocation(item: HostileItem) throws {
        // Given a 200 GB sparse file at an entry's name (allocating its size would abort the process)
        let (cache, canary, victim) = try makeStore()
        try item.plant(store: folder.store, canary: canary, victim: victim)

        // When it is read, listed and verified
        #expect(try cache.value(forKey: "victim") == nil)

        // Then it is a miss, removed as corrupt, and the rest of the store reads fine
        #expect(!FileManager.default.fileExists(atPath: try cache.entryPath(for: "victim")))
        #expect(cache.statistics.corruptEntriesRemoved == 1)
        #expect(try cache.listEntries().map(\.key) == ["keep"])
        #expect(try cache.verify().issues.isEmpty)
    }

    enum CheckRecordItem: String, CaseIterable, Sendable { case link, fifo, sparse, folder }

    @Test(arguments: TestStore.engines, CheckRecordItem.allCases)
    func hostileKeyCheckRecordIsADamagedRecordErrorNeverAHangOrACrash(_ engine: Engine, item: CheckRecordItem) throws {
        // Given a store whose store.check is replaced by a hostile item (a sparse one with the engine's version)
        let (_, canary, _) = try makeStore(engine)
        let before = canary.snapshot()
        let path = folder.store.appendingPathComponent("store.check").path
        let version = engine == .sqlite ? KeyCheckRecord.sqliteVersion : KeyCheckRecord.version
        switch item {
        case .link: try Plant.link(at: path, to: canary.url.path + "/notes.txt")
        case .fifo: try Plant.fifo(at: path)
        case .sparse: try Plant.sparse(at: path, size: 200 << 30, prefix: Data("STRK".utf8) + Data([version]))
        case .folder:
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }

        // When the store is opened, then it fails with the damaged-record error and deletes nothing
        #expect {
            _ = try makeCache(folder, engine: engine)
        } throws: { error in
            (error as? CacheError)?.code == .corruptEntry && "\(error)".contains("key-check record")
        }
        #expect(canary.snapshot() == before)
        #expect(try EngineStorage(folder, engine).count() == 2)
    }

    @Test(arguments: [
        ("9223372036854775807", Int.max),
        ("-5", 0),
        ("1e300", 0),
        ("99999999999999999999999", 0),
        ("\"many\"", 0),
    ])
    func damagedCountersCountAsZeroOrSaturateAndTheFileIsWrittenClean(text: String, expectedHits: Int) throws {
        // Given store.stats with a hostile hits counter, and a process with counts of its own
        let (cache, _, _) = try makeStore()
        try cache.flushStatistics()
        let stats = folder.store.appendingPathComponent("store.stats")
        let json =
            "{\"format\":1,\"counters\":{\"hits\":\(text),\"misses\":-3,\"insertions\":2,\"evictions\":0,"
            + "\"expirations\":0,\"corruptEntriesRemoved\":0,\"readFailures\":0}}"
        try Data(json.utf8).write(to: stats)
        _ = try cache.value(forKey: "keep")

        // When the statistics are read and flushed (arithmetic that would trap on overflow)
        let statistics = cache.statistics
        try cache.flushStatistics()

        // Then the counter saturates (or counts as zero), never traps, and the file holds clean numbers
        #expect(statistics.hits == (expectedHits == .max ? .max : expectedHits + 1))
        #expect(statistics.misses == 0)
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any]
        let counters = written?["counters"] as? [String: Int]
        #expect(counters?.values.allSatisfy { $0 >= 0 } == true)
        #expect(counters?["misses"] == 0)
    }
}
