import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A store whose master key is lost: no new key is created beside it, and one explicit call discards it
/// (issue 14, defects 2 and 3).
@Suite struct LostKeyRecoveryTests {
    let folder = TemporaryFolder()

    func keyFileConfiguration(_ engine: Engine) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            name: "tests", directory: folder.store,
            masterKeySource: .masterKeyFile(folder.url.appendingPathComponent("keys/tests.key")), engine: engine)
    }

    @Test(arguments: TestStore.engines)
    func aMissingKeyFileBesideAnExistingStoreIsAnErrorAndNoKeyIsCreated(_ engine: Engine) throws {
        // Given a store created with a key file that is then lost
        let configuration = keyFileConfiguration(engine)
        try DiskCache<String, Data>(configuration: configuration).setValue(Data([1]), forKey: "k")
        let keyFile = folder.url.appendingPathComponent("keys/tests.key").path
        try FileManager.default.removeItem(atPath: keyFile)

        // When the store is opened again
        let error = #expect(throws: CacheError.self) { try DiskCache<String, Data>(configuration: configuration) }

        // Then it names the store, the key file and the way out, creates no key, and keeps the entry file
        #expect(error?.code == .masterKeyNotFound)
        #expect(error?.message.contains(folder.store.path) == true)
        #expect(error?.message.contains(keyFile) == true)
        #expect(error?.message.contains("removeStore()") == true)
        #expect(!FileManager.default.fileExists(atPath: keyFile))
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    @Test(arguments: TestStore.engines)
    func removeStoreDiscardsALockedOutStoreSoItOpensEmpty(_ engine: Engine) throws {
        // Given a store created under one key and then configured with another
        let configuration = makeConfiguration(folder, key: TestKeys.primary, engine: engine)
        try DiskCache<String, Data>(configuration: configuration).setValue(Data([1]), forKey: "k")
        let other = makeConfiguration(folder, key: TestKeys.other, engine: engine)
        let error = #expect(throws: CacheError.self) { try DiskCache<String, Data>(configuration: other) }
        #expect(error?.code == .wrongMasterKey)

        // When the app discards it as the recipe says
        try other.removeStore()

        // Then it opens empty under the new key, and nothing of the old store is left beside it
        let reopened = try DiskCache<String, Data>(configuration: other)
        #expect(try reopened.value(forKey: "k") == nil)
        try reopened.setValue(Data([2]), forKey: "k")
        #expect(try reopened.value(forKey: "k") == Data([2]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["store"])
    }

    @Test func removeStoreRefusesAFolderThatHoldsNoStoreAndDeletesNothing() throws {
        // Given a folder with a user's file and no store.check
        try FileManager.default.createDirectory(at: folder.store, withIntermediateDirectories: true)
        let precious = folder.store.appendingPathComponent("thesis.txt")
        try Data("years of work".utf8).write(to: precious)

        // When removeStore is pointed at it by mistake
        let error = #expect(throws: CacheError.self) { try makeConfiguration(folder).removeStore() }

        // Then nothing is deleted
        #expect(error?.code == .invalidArgument)
        #expect(try Data(contentsOf: precious) == Data("years of work".utf8))
    }

    @Test(arguments: TestStore.engines)
    func removeStoreNeverFollowsALinkInsideTheStore(_ engine: Engine) throws {
        // Given a store with a symbolic link inside it (in the folder of its entries or of its large values)
        // to a canary folder outside
        let configuration = makeConfiguration(folder, engine: engine)
        try DiskCache<String, Data>(configuration: configuration).setValue(Data([1]), forKey: "k")
        let canary = folder.url.appendingPathComponent("canary", isDirectory: true)
        try FileManager.default.createDirectory(at: canary, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: canary.appendingPathComponent("file"))
        try FileManager.default.createSymbolicLink(
            at: folder.store.appendingPathComponent(engine == .sqlite ? "large/zz" : "entries/zz"),
            withDestinationURL: canary)

        // When the store is removed
        try configuration.removeStore()

        // Then the store is gone and the canary is untouched
        #expect(!FileManager.default.fileExists(atPath: folder.store.path))
        #expect(try Data(contentsOf: canary.appendingPathComponent("file")) == Data("keep".utf8))
    }

    @Test func removingAStoreThatDoesNotExistIsNotAnError() throws {
        try makeConfiguration(folder).removeStore()
        #expect(!FileManager.default.fileExists(atPath: folder.store.path))
    }
}
