import CacheCore
import CacheCrypto
import Foundation
import Testing

@testable import DiskCache

/// The default store folder and the default master-key folder come from one home.
@Suite struct DiskCacheLocationTests {
    @Test func storesAndKeyFilesComeFromTheSameHome() throws {
        // The default store folder and the default key folder follow one rule: $HOME, not the user database.
        let environment = ["HOME": "/home/alice"]
        #if !canImport(Darwin)
        #expect(DiskCacheLocation.cachesFolder(environment: environment).path == "/home/alice/.cache")
        #expect(
            try DiskCacheLocation.keysFolder(environment: environment).path == "/home/alice/.local/share/strata/keys")
        #endif
        #expect(
            MasterKeyLocation.xdgFolder("XDG_CACHE_HOME", orHome: ".cache", environment: environment)?.path
                == "/home/alice/.cache")
        #expect(
            try MasterKeyLocation.xdgKeysFolder(environment: environment).path == "/home/alice/.local/share/strata/keys"
        )
    }
}
