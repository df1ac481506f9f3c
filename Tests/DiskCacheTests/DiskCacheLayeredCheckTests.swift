import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A check that a later check backs up still has to hold on its own: each test here fails when its one
/// layer is removed, by asserting the reason a file was refused (or the step that must not happen), not
/// only the miss that every layer ends in.
@Suite struct DiskCacheLayeredCheckTests {
    let folder = TemporaryFolder()

    // MARK: - The file name in the associated data

    @Test func aRecordSealedForOneNameFailsAuthenticationUnderAnother() throws {
        // Given a record sealed for one file name
        let fixture = try RecordFixture()
        let file = try fixture.seal(fileName: RecordFixture.nameA)

        // When it is opened under another name, the key inside being what the reader asked for
        let outcome = try fixture.open(file, as: RecordFixture.nameB)

        // Then authentication fails: no key comparison is needed to refuse it
        #expect(outcome.reason == .authenticationFailed)
        #expect(try fixture.open(file, as: RecordFixture.nameA).reason == nil)
    }

    @Test(arguments: TestStore.engines)
    func verifyReportsAFileMovedOverAnotherKeysNameAsAnAuthenticationFailure(_ engine: Engine) throws {
        // Given two entries, one moved over the other's name
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data("a".utf8), forKey: "a")
        try cache.setValue(Data("b".utf8), forKey: "b")
        let pathB = try cache.reportedPath(for: "b")
        try EngineStorage(folder, engine).moveRecord(named: cache.entryName(for: "a"), over: cache.entryName(for: "b"))

        // When the store is verified
        let report = try cache.verify()

        // Then the swap fails the seal itself, before the key inside is compared with the name
        #expect(report.removed == [pathB])
        #expect(report.issues.map(\.reason) == [CorruptionReason.authenticationFailed.rawValue])
    }

    // MARK: - The header in the associated data

    @Test(arguments: HeaderEdit.allCases)
    func everyHeaderFieldIsBoundToTheSeal(edit: HeaderEdit) throws {
        // Given a record with every optional field present
        let fixture = try RecordFixture()
        let file = try fixture.seal(fileName: RecordFixture.nameA)

        // When one header field is edited so that the header still parses, and the epoch expected is the
        // edited one (so the epoch guard lets it through)
        let (edited, epochID) = edit.apply(to: file, epochID: fixture.epoch.id)
        #expect(EntryRecord.parseHeader(edited).isSuccess)
        let outcome = try fixture.open(edited, as: RecordFixture.nameA, epochID: epochID)

        // Then the seal fails
        #expect(outcome.reason == .authenticationFailed)
    }

    // MARK: - The key inside

    @Test(arguments: TestStore.engines)
    func anAuthenticRecordHoldingAnotherKeyIsAMissReportedAsMisplaced(_ engine: Engine) throws {
        // Given a record sealed under the store's epoch for the name of "b" but holding the key "a" (what
        // only a holder of the master key could write; the file name alone cannot tell)
        let cache = try makeCache(folder, engine: engine)
        let storage = EngineStorage(folder, engine)
        try cache.setValue(Data("b".utf8), forKey: "b")
        let name = try cache.entryName(for: "b")
        let file = try cache.sealedRecord(named: name, keyBytes: Data("a".utf8), valueBytes: Data("a's value".utf8))
        try storage.replaceRecord(named: name, with: file)

        // When "b" is read, and the same record, put back, is verified
        let read = try cache.value(forKey: "b")
        try cache.setValue(Data("b".utf8), forKey: "b")
        try storage.replaceRecord(named: name, with: file)
        let report = try cache.verify()

        // Then the read is a miss that removes it, and verify names the reason
        #expect(read == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 2)
        #expect(report.issues.map(\.reason) == [CorruptionReason.misplaced.rawValue])
        #expect(try EngineStorage(folder, engine).count() == 0)
    }

    // MARK: - Parsing before authentication

    @Test(arguments: TestStore.engines, Damage.allCases)
    func verifyNamesTheFirstCheckADamagedFileFails(_ engine: Engine, damage: Damage) throws {
        // Given an entry whose file is damaged
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data(count: 50), forKey: "k")
        let path = try cache.reportedPath(for: "k")
        let storage = EngineStorage(folder, engine)
        let name = try cache.entryName(for: "k")
        try storage.replaceRecord(named: name, with: damage.apply(to: try #require(try storage.records()[name])))

        // When the store is verified
        let report = try cache.verify()

        // Then the reason is the earliest check that refuses it, not the seal that would refuse it anyway
        #expect(report.removed == [path])
        #expect(report.issues.map(\.reason) == [damage.reason.rawValue])
    }

    // MARK: - The key-check record

    @Test(arguments: TestStore.engines)
    func aCheckRecordOfAnotherSizeIsJudgedByItsSizeBeforeItIsRead(_ engine: Engine) throws {
        // Given a store whose genuine store.check grew into a 200 GB sparse file (its first bytes intact)
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")
        let size: Int64 = 200 << 30
        #expect(truncate(folder.store.appendingPathComponent("store.check").path, off_t(size)) == 0)

        // When the store is opened
        let error = #expect(throws: CacheError.self) { try makeCache(folder, engine: engine) }

        // Then it is a damaged record judged by the size fstat gives, not by the bytes a read would find
        #expect(error?.code == .corruptEntry)
        #expect(error?.message.contains("wrong length \(size)") == true)
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    // MARK: - Expiry boundaries

    @Test(arguments: TestStore.engines)
    func aWriteThatExpiresAtTheCurrentInstantStoresNothing(_ engine: Engine) throws {
        // Given a store at a fixed instant
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)

        // When an entry expiring at exactly that instant is written
        try cache.setEntry(CacheEntry(value: Data([1]), expiresAt: clock.now), forKey: "k")

        // Then no file is written (not one that a read would then remove as expired)
        #expect(try EngineStorage(folder, engine).count() == 0)
        #expect(cache.statistics.insertions == 0)
    }

    @Test(arguments: TestStore.engines)
    func verifyAtTheExpiryInstantRemovesTheEntryAsExpired(_ engine: Engine) throws {
        // Given an entry whose expiry is reached exactly
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "k", expiry: .seconds(10))
        clock.advance(by: 10)

        // When the store is verified
        let report = try cache.verify()

        // Then it is expired: live only while now is before its expiry
        #expect(report.issues.map(\.reason) == ["expired"])
        #expect(cache.statistics.expirations == 1)
    }

    // MARK: - Nonces

    @Test(arguments: TestStore.engines)
    func rewritingAnEntryDrawsAFreshNonce(_ engine: Engine) throws {
        // Given the same key and value written twice at the same instant
        let cache = try makeCache(folder, engine: engine)
        let storage = EngineStorage(folder, engine)
        try cache.setValue(Data("same".utf8), forKey: "k")
        let name = try cache.entryName(for: "k")
        let first = try #require(try storage.records()[name])
        try cache.setValue(Data("same".utf8), forKey: "k")
        let second = try #require(try storage.records()[name])

        // Then the headers are equal and the nonces (and so the ciphertexts) are not
        let nonce = EntryRecord.headerSize..<EntryRecord.headerSize + EntryRecord.nonceSize
        #expect(first.prefix(EntryRecord.headerSize) == second.prefix(EntryRecord.headerSize))
        #expect(first[nonce] != second[nonce])
        #expect(first.dropFirst(nonce.upperBound) != second.dropFirst(nonce.upperBound))
    }
}

// MARK: - Fixtures

/// A record sealed under a fixed epoch, opened as a read opens it.
struct RecordFixture {
    static let nameA = String(repeating: "a1", count: 32)
    static let nameB = String(repeating: "b2", count: 32)
    static let keyBytes = Data("key".utf8)

    let epoch: Epoch

    init() throws {
        epoch = try Epoch.derive(
            master: try MasterKey(bytes: TestKeys.primary), salt: Data(repeating: 0x33, count: KeyCheckRecord.saltSize))
    }

    /// A record for `fileName` with an expiry, a stale retention and a cost.
    func seal(fileName: String) throws -> Data {
        let value = Data((0..<40).map { UInt8($0) })
        let expiresAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let header = EntryRecord.Header(
            epochID: epoch.id, createdAt: expiresAt.addingTimeInterval(-60), expiresAt: expiresAt, cost: 7,
            keyLength: Self.keyBytes.count, valueLength: value.count, staleUntil: expiresAt.addingTimeInterval(30))
        return try EntryRecord.seal(
            keyBytes: Self.keyBytes, valueBytes: value, header: header, fileName: fileName, key: epoch.sealingSubkey
        ) { Data($0) }
    }

    func open(_ file: Data, as fileName: String, epochID: UInt64? = nil) throws -> Result<EntryRecord, CorruptionReason>
    {
        try file.withUnsafeBytes {
            try EntryRecord.open($0, fileName: fileName, epochID: epochID ?? epoch.id, key: epoch.sealingSubkey)
        }
    }
}

/// An edit of one header field that leaves the header well-formed and the file's length right.
enum HeaderEdit: String, CaseIterable, Sendable {
    case staleRetention, epochID, createdAt, expiresAt, cost, keyValueSplit, tagFlag

    /// The edited file, and the epoch id a reader must expect so that only the seal can refuse it.
    func apply(to file: Data, epochID: UInt64) -> (Data, UInt64) {
        var bytes = file
        func add(_ delta: Int64, at offset: Int, width: Int) {
            let range = offset..<offset + width
            let old = bytes[range].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let new = old &+ delta
            bytes.replaceSubrange(
                range, with: (0..<width).reversed().map { UInt8(truncatingIfNeeded: new >> (8 * $0)) })
        }
        switch self {
        case .staleRetention: add(1, at: 6, width: 2)
        case .epochID:
            add(1, at: 8, width: 8)
            return (bytes, epochID &+ 1)
        case .createdAt: bytes[20] ^= 0x01
        case .expiresAt: bytes[26] ^= 0x01
        case .cost: add(1, at: 32, width: 8)
        case .keyValueSplit:
            add(1, at: 40, width: 4)
            add(-1, at: 44, width: 8)
        case .tagFlag: bytes[5] |= EntryRecord.flagHasTags
        }
        return (bytes, epochID)
    }
}

extension Damage {
    /// The reason verify gives: the first check in Docs/DiskFormat.md's order that the damage fails.
    var reason: CorruptionReason {
        switch self {
        case .truncated, .empty: .truncated
        case .bitFlipInCiphertext, .bitFlipInHeader, .flippedTag: .authenticationFailed
        case .unknownVersion: .unsupportedVersion
        case .trailingGarbage: .lengthMismatch
        }
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

extension Result where Failure == CorruptionReason {
    /// Why the record was refused, `nil` when it opened.
    var reason: CorruptionReason? {
        if case .failure(let reason) = self { return reason }
        return nil
    }
}
