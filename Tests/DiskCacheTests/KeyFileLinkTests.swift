import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Key files reached through symbolic links.
@Suite struct KeyFileLinkTests {
    let folder = TemporaryFolder()

    @Test func danglingSymbolicLinkIsReportedAsALinkToAMissingFile() throws {
        // Given a key file path that is a symbolic link to a file that does not exist
        let link = folder.url.appendingPathComponent("store.key")
        let missing = folder.url.appendingPathComponent("gone/real.key")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: missing.path)

        // When the key is loaded
        let error = #expect(throws: CacheError.self) { try MasterKeyLoader.loadOrCreateKeyFile(at: link) }

        // Then the error says what is wrong, and no key was created through the link
        #expect(error?.code == .invalidKey)
        #expect(error?.path == link.path)
        #expect(error?.message.contains("symbolic link to a missing file (\(missing.path))") == true)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func symbolicLinkToAnExistingKeyFileIsFollowed() throws {
        // Given a key file and a symbolic link to it
        let real = folder.url.appendingPathComponent("real.key")
        let created = try MasterKeyLoader.loadOrCreateKeyFile(at: real)
        let link = folder.url.appendingPathComponent("link.key")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: real.path)

        // When the key is loaded through the link
        let loaded = try MasterKeyLoader.loadOrCreateKeyFile(at: link)

        // Then it is the same key
        #expect(loaded.dataForDerivation == created.dataForDerivation)
    }
}
