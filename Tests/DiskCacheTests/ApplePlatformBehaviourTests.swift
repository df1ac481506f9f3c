import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The platform-specific parts of DiskCache that can run here: the Linux side of each, and the shared code
/// the Apple side goes through (Docs/Platforms.md lists what is only type-checked or read).
@Suite struct ApplePlatformBehaviourTests {
    let folder = TemporaryFolder()

    @Test func fullSyncFlushesAnOpenFileAndReportsABadDescriptor() throws {
        // Given a file with unwritten data
        let path = folder.url.appendingPathComponent("file").path
        let descriptor = open(path, O_RDWR | O_CREAT, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(write(descriptor, "x", 1) == 1)

        // Then flushing it succeeds, and a closed descriptor fails with EBADF, as fsync would
        #expect(fullSync(descriptor) == 0)
        #expect(fullSync(-1) == -1)
        #expect(errno == EBADF)
    }

    @Test(arguments: TestStore.engines)
    func durableStoreWritesAndReadsBack(_ engine: Engine) throws {
        // Given a store that flushes every write (the F_FULLFSYNC path on Darwin, fsync here)
        let cache = try makeCache(folder, durability: .fsync, engine: engine)

        // When a value is stored, then read by a new instance
        try cache.setValue(Data("v".utf8), forKey: "k")
        let reopened = try makeCache(folder, engine: engine)

        // Then it is there
        #expect(try reopened.value(forKey: "k") == Data("v".utf8))
    }

    @Test func protectionClassesAreTheKernelsClassesAToD() {
        // The numbers F_SETPROTECTIONCLASS takes (xnu's PROTECTION_CLASS_A…D): a wrong one would give the
        // store's folders another class than the one configured, with no error on the device.
        #expect(DataProtection.classNumber(.complete) == 1)
        #expect(DataProtection.classNumber(.completeUnlessOpen) == 2)
        #expect(DataProtection.classNumber(.completeUntilFirstUserAuthentication) == 3)
        #expect(DataProtection.classNumber(.none) == 4)
    }

    @Test func platformDefaultsAreTheKeyFileAndFirstUnlockProtection() {
        let configuration = DiskCacheConfiguration(name: "thumbs")
        #if os(macOS) || os(Linux)
        guard case .defaultMasterKeyFile = configuration.masterKeySource else {
            Issue.record("the default key source here is the default key file, not \(configuration.masterKeySource)")
            return
        }
        #else
        guard case .keychain(let service) = configuration.masterKeySource else {
            Issue.record("the default key source here is the Keychain, not \(configuration.masterKeySource)")
            return
        }
        #expect(service == "Strata")
        #endif
        #expect(configuration.fileProtection == .completeUntilFirstUserAuthentication)
    }

    #if !canImport(Security)
    @Test(arguments: TestStore.engines)
    func keychainMasterKeySourceIsAClearErrorWhereThereIsNoKeychain(_ engine: Engine) throws {
        // Given a configuration that asks for the Keychain on Linux
        let configuration = DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .keychain(service: "Strata"), engine: engine)

        // When the cache is opened, then it is an invalid argument that names the Keychain
        let error = try #require(throws: CacheError.self) { try DiskCache<String, Data>(configuration: configuration) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("Keychain"))
        // And nothing was created
        #expect(!FileManager.default.fileExists(atPath: folder.store.path))
    }
    #endif

    @Test(
        arguments: TestStore.engines,
        [
            DiskCacheConfiguration.FileProtection.complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication,
            .none,
        ])
    func everyProtectionClassOpensAStore(_ engine: Engine, _ protection: DiskCacheConfiguration.FileProtection) throws {
        // Given a store with this protection class (applied on iOS-family systems, ignored here)
        var configuration = makeConfiguration(folder, engine: engine)
        configuration.fileProtection = protection

        // Then it opens, stores and reads
        let cache = try DiskCache<String, Data>(configuration: configuration)
        try cache.setValue(Data([1]), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data([1]))
        #expect(DataProtection.isAvailable == false)
    }
}
