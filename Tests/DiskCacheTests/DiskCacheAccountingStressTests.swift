import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// The entry count and byte total a store reports equal what its storage holds (the entry files on disk, or
/// the rows of the SQLite engine's database) after any interleaving of writes, removals and wipes (issue 14,
/// defect 4).
@Suite struct DiskCacheAccountingStressTests {
    let folder = TemporaryFolder()

    enum Mix: String, CaseIterable {
        case oneKeyManyWriters, setAndRemove, removeAllRacingWrites, largeAndSmallValues
    }

    @Test(arguments: TestStore.engines, Mix.allCases)
    func totalsEqualTheFilesOnDiskAfterConcurrentChanges(_ engine: Engine, mix: Mix) async throws {
        // Given one store and 8 tasks changing a few keys at once
        let cache = try makeCache(folder, engine: engine)
        if mix == .setAndRemove { _ = cache.statistics }  // with the index built before the race, and without
        let rounds = StressScale.scaled(300)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<rounds {
                        let key = "k\(round % 3)"
                        let value = Data(count: 10 + (worker * 7 + round) % 50)
                        switch mix {
                        case .oneKeyManyWriters:
                            try await cache.setValue(value, forKey: "one")
                        case .setAndRemove:
                            if (worker + round) % 2 == 0 {
                                try await cache.setValue(value, forKey: key)
                            } else {
                                try await cache.removeEntry(forKey: key)
                            }
                        case .largeAndSmallValues:
                            // Every other write too large for a row of the SQLite engine (a file of its own).
                            let large = Data(count: Engine.sqliteRowLimit + value.count)
                            if round % 5 == 4 {
                                try await cache.removeEntry(forKey: key)
                            } else {
                                try await cache.setValue((worker + round) % 2 == 0 ? large : value, forKey: key)
                            }
                        case .removeAllRacingWrites:
                            if worker == 0 && round % 10 == 0 {
                                try await cache.removeAll()
                            } else {
                                try await cache.setValue(value, forKey: key)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }

        // When the tasks are done, the reported totals are compared with a scan of the storage
        let storage = EngineStorage(folder, engine)

        // Then they are equal
        #expect(try cache.count == storage.count())
        #expect(try cache.totalBytes == storage.bytes())
    }
}
