import Foundation
import Strata
import StrataTestSupport
import Testing

// Only `import Strata` above (and the tests' own support): this file compiles only if the umbrella
// re-exports every cache module and CacheCore with them.
@Suite struct UmbrellaImportTests {
    /// A clock that never moves, so the one-minute expiry below cannot pass on a slow machine (CacheTesting's
    /// `ManualClock` is not imported here on purpose).
    struct FrozenClock: CacheClock {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
    }

    let folder = TemporaryFolder(label: "umbrella")

    @Test func oneImportBringsEveryTierAndTheCoreTypes() async throws {
        let clock = FrozenClock()
        let memory = try MemoryCache<String, Data>(countLimit: 10, clock: clock)
        let disk = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "umbrella", directory: folder.url, masterKeySource: .masterKey(Data(repeating: 7, count: 32)),
                clock: clock))
        let cache: any Cache<String, Data> = try MultiCache<String, Data>([memory, disk])

        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .minutes(1))

        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        #expect(memory["k"] == Data("v".utf8))
        let error = CacheError(.invalidArgument, "m")
        #expect(error.code == .invalidArgument)
    }
}
