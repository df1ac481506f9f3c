import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Ways an entry's sealed record (its file, or its row) can be damaged; each must read as a miss that removes it.
enum Damage: String, CaseIterable, Sendable {
    case truncated, empty, bitFlipInCiphertext, bitFlipInHeader, flippedTag, unknownVersion, trailingGarbage

    func apply(to data: Data) -> Data {
        var bytes = [UInt8](data)
        switch self {
        case .truncated: return Data(bytes.prefix(bytes.count / 2))
        case .empty: return Data()
        case .bitFlipInCiphertext: bytes[EntryRecord.headerSize + EntryRecord.nonceSize + 3] ^= 0x01
        case .bitFlipInHeader: bytes[20] ^= 0x80  // createdAt
        case .flippedTag: bytes[bytes.count - 1] ^= 0xff
        case .unknownVersion: bytes[4] = 99
        case .trailingGarbage: bytes.append(0)
        }
        return Data(bytes)
    }
}

@Suite struct DiskCacheCorruptionTests {
    let folder = TemporaryFolder()
    let events = EventRecorder()

    @Test(arguments: TestStore.engines, Damage.allCases)
    func damagedEntryIsAMissThatIsRemovedCountedAndReported(_ engine: Engine, damage: Damage) throws {
        // Given a stored entry whose file is then damaged
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        try cache.setValue(Data("precious".utf8), forKey: "k")
        try cache.setValue(Data("neighbour".utf8), forKey: "n")
        let storage = EngineStorage(folder, engine)
        let name = try cache.entryName(for: "k")
        let original = try #require(try storage.records()[name])
        try storage.replaceRecord(named: name, with: damage.apply(to: original))

        // When it is read
        let value = try cache.value(forKey: "k")

        // Then it is a miss, the file is gone, and the damage is counted and reported
        #expect(value == nil)
        #expect(try storage.records()[name] == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 1)
        #expect(cache.statistics.misses == 1)
        #expect(events.count(of: .corruptEntryRemoved) == 1)
        #expect(try cache.value(forKey: "n") == Data("neighbour".utf8))
    }

    @Test(arguments: TestStore.engines)
    func fileMovedToAnotherKeysNameIsAMiss(_ engine: Engine) throws {
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        try cache.setValue(Data("a".utf8), forKey: "a")
        try cache.setValue(Data("b".utf8), forKey: "b")

        // The AAD binds the file name, so a swapped file fails to authenticate.
        try EngineStorage(folder, engine).moveRecord(named: cache.entryName(for: "a"), over: cache.entryName(for: "b"))

        #expect(try cache.value(forKey: "b") == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 1)
        #expect(events.count(of: .corruptEntryRemoved) == 1)
    }

    @Test(arguments: TestStore.engines)
    func verifyRemovesDamagedFilesAndReportsReasons(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        for index in 0..<4 { try cache.setValue(Data(count: 50), forKey: "k\(index)") }
        let damagedPath = try cache.reportedPath(for: "k2")
        let storage = EngineStorage(folder, engine)
        let name = try cache.entryName(for: "k2")
        try storage.replaceRecord(
            named: name, with: Damage.flippedTag.apply(to: try #require(try storage.records()[name])))
        var progressCalls: [(Int, Int)] = []

        let report = try cache.verify { progressCalls.append(($0, $1)) }

        #expect(report.checked == 4)
        #expect(report.removed == [damagedPath])
        #expect(report.issues.first?.reason == CorruptionReason.authenticationFailed.rawValue)
        #expect(progressCalls.last.map { [$0.0, $0.1] } == [4, 4])
        #expect(try EngineStorage(folder, engine).count() == 3)
    }

    @Test func unreadableFileIsReportedAndKept() throws {
        // Given an entry path that cannot be read (a folder; permissions do not stop root)
        let cache = try makeCache(folder, observer: events.observer)
        try cache.setValue(Data([1]), forKey: "k")
        let path = try cache.entryPath(for: "k")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)

        // When it is read, then the read throws, the event is reported and the path is left alone
        let error = #expect(throws: CacheError.self) { try cache.value(forKey: "k") }
        #expect(error?.code == .io)
        #expect(events.count(of: .readFailed) == 1)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(cache.statistics.errors == 1)
    }

    // MARK: - Master keys and the check record

    @Test(arguments: TestStore.engines)
    func wrongMasterKeyFailsAndDeletesNothing(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        for index in 0..<3 { try cache.setValue(Data([UInt8(index)]), forKey: "k\(index)") }
        try cache.flushStatistics()
        let before = allFiles(under: folder.store).map {
            ($0, try? Data(contentsOf: folder.store.appendingPathComponent($0)))
        }

        let error = #expect(throws: CacheError.self) { try makeCache(folder, key: TestKeys.other, engine: engine) }

        #expect(error?.code == .wrongMasterKey)
        #expect(error?.message.contains("'tests'") == true)
        let after = allFiles(under: folder.store).map {
            ($0, try? Data(contentsOf: folder.store.appendingPathComponent($0)))
        }
        #expect(after.map(\.0) == before.map(\.0))
        #expect(after.map(\.1) == before.map(\.1))
        let rightKey = try makeCache(folder, engine: engine)
        #expect(try (0..<3).map { try rightKey.value(forKey: "k\($0)") } == [Data([0]), Data([1]), Data([2])])
    }

    /// A flipped bit in the record's seal, or in the key fingerprint its header carries (offset 40, after the
    /// magic, version and salt), is damage, not another master key.
    @Test(arguments: TestStore.engines, [-1, 40])
    func damagedCheckRecordIsAClearErrorAndDeletesNothing(_ engine: Engine, offset: Int) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")
        let checkURL = folder.store.appendingPathComponent("store.check")
        var check = try Data(contentsOf: checkURL)
        check[offset < 0 ? check.count + offset : offset] ^= 0x01
        try check.write(to: checkURL)

        let error = #expect(throws: CacheError.self) { try makeCache(folder, engine: engine) }

        #expect(error?.code == .corruptEntry)
        #expect(error?.message.contains("key-check record") == true)
        #expect(try EngineStorage(folder, engine).count() == 1)
        #expect(try Data(contentsOf: checkURL) == check)
    }

    // MARK: - Epochs

    @Test(arguments: TestStore.engines)
    func interruptedWipeLeavesNothingDecryptableAndLeftoversArePurged(_ engine: Engine) throws {
        // Given entries, and a wipe that rotated the epoch but died before deleting files
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        for index in 0..<3 { try cache.setValue(Data("secret \(index)".utf8), forKey: "k\(index)") }
        try cache.startNewEpochDeletingNothing()
        #expect(try EngineStorage(folder, engine).count() == 3)

        // When one is read and the rest are swept
        let read = try cache.value(forKey: "k0")
        _ = try cache.removeExpired()

        // Then none decrypts, and all are gone
        #expect(read == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
        #expect(cache.statistics.corruptEntriesRemoved == 3)
    }

    @Test(arguments: TestStore.engines)
    func leftoverFromAnInterruptedWipeIsAMissForAFreshProcess(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data("old".utf8), forKey: "k")
        try cache.startNewEpochDeletingNothing()

        let fresh = try makeCache(folder, engine: engine)

        #expect(try fresh.value(forKey: "k") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
    }

    @Test(arguments: TestStore.engines)
    func removeAllByAnotherInstanceIsSeenByThisOne(_ engine: Engine) throws {
        let first = try makeCache(folder, engine: engine)
        let second = try makeCache(folder, engine: engine)
        try first.setValue(Data([1]), forKey: "k")

        try second.removeAll()
        try second.setValue(Data([2]), forKey: "k2")
        try first.setValue(Data([3]), forKey: "k3")

        #expect(try first.value(forKey: "k") == nil)
        #expect(try first.value(forKey: "k2") == Data([2]))
        #expect(try second.value(forKey: "k3") == Data([3]))
    }

    // MARK: - Nothing in the clear

    @Test(arguments: TestStore.engines)
    func noPlaintextKeyOrValueAppearsAnywhereInTheStore(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        let key = "PLAINTEXT-KEY-MARKER-\(UUID().uuidString)"
        let value = Data(String(repeating: "PLAINTEXT-VALUE-MARKER ", count: 50).utf8)
        try cache.setValue(value, forKey: key)
        try cache.withLock(forKey: key) {}
        try cache.flushStatistics()
        _ = try cache.value(forKey: key)

        let needles = [Data(key.utf8), Data("PLAINTEXT-VALUE-MARKER".utf8), Data("PLAINTEXT".utf8)]
        let files = allFiles(under: folder.store)
        #expect(files.count >= 4)
        for file in files {
            let bytes = try Data(contentsOf: folder.store.appendingPathComponent(file))
            for needle in needles {
                #expect(!bytes.containsBytes(needle), "\(file) contains plaintext")
            }
            #expect(!file.contains("PLAINTEXT"))
        }
    }
}
