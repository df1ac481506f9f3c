import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// The entry count and byte total a store reports equal the files on disk after any interleaving of
/// writes, removals and wipes (issue 14, defect 4).
@Suite struct DiskCacheAccountingStressTests {
    let folder = TemporaryFolder()

    /// Entry files on disk and their sizes, from a directory scan.
    func scanned() -> (count: Int, bytes: Int) {
        let entries = folder.store.appendingPathComponent("entries").path
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: entries)) ?? []
        var count = 0
        var bytes = 0
        for name in names where name.count == 67 {
            let attributes = try? FileManager.default.attributesOfItem(atPath: entries + "/" + name)
            count += 1
            bytes += (attributes?[.size] as? Int) ?? 0
        }
        return (count, bytes)
    }

    enum Mix: String, CaseIterable {
        case oneKeyManyWriters, setAndRemove, removeAllRacingWrites
    }

    @Test(arguments: Mix.allCases)
    func totalsEqualTheFilesOnDiskAfterConcurrentChanges(mix: Mix) async throws {
        // Given one store and 8 tasks changing a few keys at once
        let cache = try makeCache(folder)
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

        // When the tasks are done, the reported totals are compared with a scan of the folder
        let reported = cache.statistics.base
        let onDisk = scanned()

        // Then they are equal
        #expect(reported.count == onDisk.count)
        #expect(reported.totalCost == onDisk.bytes)
    }
}
