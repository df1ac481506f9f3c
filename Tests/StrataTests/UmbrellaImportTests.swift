import Foundation
import Strata
import StrataTestSupport
import Testing

// Only `import Strata` above (and the tests' own support): this file compiles only if the umbrella
// re-exports every cache module and CacheCore with them.
@Suite struct UmbrellaImportTests {
    let folder = TemporaryFolder(label: "umbrella")

    @Test func oneImportBringsEveryTierAndTheCoreTypes() async throws {
        let memory = try MemoryCache<String, Data>(countLimit: 10)
        let disk = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "umbrella", directory: folder.url, masterKeySource: .masterKey(Data(repeating: 7, count: 32)))
        )
        let cache: any Cache<String, Data> = try MultiCache<String, Data>([memory, disk])

        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .minutes(1))

        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        #expect(memory["k"] == Data("v".utf8))
        let error = CacheError(.invalidArgument, "m")
        #expect(error.code == .invalidArgument)
    }
}
