import Foundation
import Strata
import Testing

// Only `import Strata` above: this file compiles only if the umbrella re-exports every cache module
// and CacheCore with them.
@Suite struct UmbrellaImportTests {
    @Test func oneImportBringsEveryTierAndTheCoreTypes() async throws {
        let memory = try MemoryCache<String, Data>(countLimit: 10)
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-umbrella-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "umbrella", directory: folder, masterKeySource: .key(Data(repeating: 7, count: 32)))
        )
        let cache: any Cache<String, Data> = try MultiCache<String, Data>([memory, disk])

        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .minutes(1))

        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        #expect(memory["k"] == Data("v".utf8))
        let error = CacheError(.invalidArgument, "m")
        #expect(error.code == .invalidArgument)
    }
}
