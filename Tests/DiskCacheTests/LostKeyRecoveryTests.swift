import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A store whose master key is lost: no new key is created beside it, and one explicit call discards it
/// (issue 14, defects 2 and 3).
@Suite struct LostKeyRecoveryTests {
    let folder = TemporaryFolder()

    func keyFileConfiguration() -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            name: "tests", directory: folder.store,
            masterKeySource: .masterKeyFile(folder.url.appendingPathComponent("keys/tests.key")))
    }

    @Test func aMissingKeyFileBesideAnExistingStoreIsAnErrorAndNoKeyIsCreated() throws {
        // Given a store created with a key file that is then lost
        let configuration = keyFileConfiguration()
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
        #expect(entryFiles(folder).count == 1)
    }

    @Test func removeStoreDiscardsALockedOutStoreSoItOpensEmpty() throws {
        // Given a store created under one key and then configured with another
        let configuration = makeConfiguration(folder, key: TestKeys.primary)
        try DiskCache<String, Data>(configuration: configuration).setValue(Data([1]), forKey: "k")
        let other = makeConfiguration(folder, key: TestKeys.other)
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

    @Test func removeStoreNeverFollowsALinkInsideTheStore() throws {
        // Given a store with a symbolic link inside it to a canary folder outside
        let configuration = makeConfiguration(folder)
        try DiskCache<String, Data>(configuration: configuration).setValue(Data([1]), forKey: "k")
        let canary = folder.url.appendingPathComponent("canary", isDirectory: true)
        try FileManager.default.createDirectory(at: canary, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: canary.appendingPathComponent("file"))
        try FileManager.default.createSymbolicLink(
            at: folder.store.appendingPathComponent("entries/zz"), withDestinationURL: canary)

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
