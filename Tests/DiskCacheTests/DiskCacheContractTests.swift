import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

@Suite struct DiskCacheContractTests {
    let folder = TemporaryFolder()

    @Test(arguments: TestStore.engines, CacheContract.Check.allCases)
    func keepsTheCacheContract(_ engine: Engine, _ check: CacheContract.Check) async throws {
        let folder = self.folder
        try await CacheContract.verify(check) { clock in
            // A new store folder for each call, all inside this test's temporary folder.
            let configuration = DiskCacheConfiguration(
                name: "contract", directory: folder.url.appendingPathComponent(UUID().uuidString),
                masterKeySource: .masterKey(TestKeys.primary), clock: clock, engine: engine)
            return try DiskCache<String, Data>(configuration: configuration)
        }
    }
}
