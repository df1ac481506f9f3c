import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// `migrateStoreToSQLite()`: a file store becomes a SQLite store in place, every live entry kept, and an
/// interrupted migration leaves the file store whole and resumes without bringing back what changed since.
@Suite struct SQLiteEngineMigrationTests {
    let folder = TemporaryFolder()
    let clock = ManualClock()

    func configuration(_ engine: DiskCacheConfiguration.Engine) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary), clock: clock,
            engine: engine)
    }

    func set(_ cache: DiskCache<String, Data>, _ key: String, _ value: Data, tags: Set<String>) throws {
        try cache.setEntry(
            CacheEntry(value: value, tags: tags), forKey: key, taggedAt: try cache.tagVersions(for: tags))
    }

    @Test func everyLiveEntryMovesWithItsExpiryCostAndTags() throws {
        let large = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) })
        do {
            let files = try DiskCache<String, Data>(configuration: configuration(.files))
            try files.setValue(Data("plain".utf8), forKey: "plain")
            try files.setEntry(
                CacheEntry(value: Data("timed".utf8), expiresAt: clock.now.addingTimeInterval(600), cost: 9),
                forKey: "timed")
            try files.setValue(Data("gone".utf8), forKey: "expired", expiry: .seconds(1))
            try set(files, "tagged", Data("tagged".utf8), tags: ["red"])
            try files.setValue(large, forKey: "large")
        }
        clock.advance(by: 5)

        let moved = try configuration(.automatic).migrateStoreToSQLite()

        #expect(moved == 4)
        let cache = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(cache.engine is SQLiteEngine)
        #expect(try cache.value(forKey: "plain") == Data("plain".utf8))
        let timed = try #require(try cache.entry(forKey: "timed"))
        #expect(timed.value == Data("timed".utf8))
        #expect(timed.expiresAt == clock.now.addingTimeInterval(595))
        #expect(timed.cost == 9)
        #expect(try cache.value(forKey: "expired") == nil)
        #expect(try cache.value(forKey: "large") == large)
        #expect(try cache.value(forKey: "tagged") == Data("tagged".utf8))
        try cache.removeAll(taggedWith: "red")
        #expect(try cache.value(forKey: "tagged") == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.store.path + "/entries"))
        #expect(try configuration(.automatic).migrateStoreToSQLite() == 0)
    }

    @Test func anInterruptedMigrationLeavesTheFileStoreAndResumesWithoutResurrectingAnything() throws {
        let files = try DiskCache<String, Data>(configuration: configuration(.files))
        for index in 0..<6 { try files.setValue(Data("v\(index)".utf8), forKey: "k\(index)") }

        // Interrupted after the copy, before the commit: the folder is still the file store.
        do {
            let database = try SQLiteEngine(configuration: configuration(.sqlite), migrating: true)
            #expect(try database.copyEntries(from: try #require(files.engine as? FileEngine), progress: nil) == 6)
        }
        let reopened = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(reopened.engine is FileEngine)
        // The file store is used meanwhile: one key removed, one changed, one added.
        try reopened.removeEntry(forKey: "k0")
        try reopened.setValue(Data("changed".utf8), forKey: "k1")
        try reopened.setValue(Data("new".utf8), forKey: "k9")

        var reported: [(Int, Int)] = []
        let moved = try configuration(.automatic).migrateStoreToSQLite { reported.append(($0, $1)) }

        #expect(moved == 6)
        #expect(reported.last.map { $0.0 == $0.1 } == true)
        let cache = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(try cache.value(forKey: "k0") == nil)
        #expect(try cache.value(forKey: "k1") == Data("changed".utf8))
        #expect(try cache.value(forKey: "k9") == Data("new".utf8))
        #expect(try cache.value(forKey: "k5") == Data("v5".utf8))
        #expect(cache.count == 6)
    }
}
