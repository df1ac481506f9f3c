import CacheCore
import CacheCrypto
import CacheTesting
import Foundation
import StrataTestSupport
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

    @Test(arguments: TestStore.engines)
    func aStoreNamedThroughALinkedFolderOpensAndFindsItsEntries(engine: Engine) throws {
        // Given a store, and a symbolic link to the folder holding it (as /tmp and /var are on macOS)
        let folder = TemporaryFolder()
        let real = folder.url.appendingPathComponent("real", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        let linked = folder.url.appendingPathComponent("linked", isDirectory: true)
        try FileManager.default.createSymbolicLink(at: linked, withDestinationURL: real)
        func open(_ parent: URL) throws -> DiskCache<String, Data> {
            try DiskCache(
                configuration: DiskCacheConfiguration(
                    name: "tests", directory: parent.appendingPathComponent("store"),
                    masterKeySource: .masterKey(TestKeys.primary), clock: ManualClock(), engine: engine))
        }

        // When the store is created through the link, then opened through the real path and the link again
        try open(linked).setValue(Data("v".utf8), forKey: "k")

        // Then each open finds the entry (SQLite refuses a link anywhere in a database's path unless the
        // folders above it are resolved first)
        #expect(try open(real).value(forKey: "k") == Data("v".utf8))
        #expect(try open(linked).value(forKey: "k") == Data("v".utf8))
    }
}
