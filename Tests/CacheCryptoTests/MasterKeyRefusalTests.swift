import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import CacheCrypto

/// A tier's refusal to create a key (a store that exists without its key file) against processes that create
/// a new store together: the key file one of them made must be found, never refused as lost.
@Suite struct MasterKeyRefusalTests {
    static let lost = CacheError(.masterKeyNotFound, "the store exists, but its key file does not")

    @Test func aRefusalFindsTheKeyFileARacingCreatorMadeAfterTheFirstRead() throws {
        try withTemporaryDirectory { directory in
            // Given no key file when the loader first looks, and another process that, before the loader's
            // refusal check runs, links its key file and then creates the store (so the check sees a store)
            let keyFile = directory.appendingPathComponent("keys/store.key")
            let winner = Data((0..<32).map { UInt8(0x40 + $0) })
            let checks = Locked(0)
            let refusing: (String) -> CacheError? = { path in
                checks.withLock { $0 += 1 }
                try? FileManager.default.createDirectory(
                    at: keyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? writeFile(winner, to: URL(fileURLWithPath: path), mode: 0o600)
                return Self.lost
            }

            // When the loader opens or creates the key
            let loaded = try MasterKeyLoader.openOrCreateKeyFile(
                at: keyFile, protection: nil, refusingCreation: refusing)

            // Then it uses the winner's key, as the store's record was sealed with it, and did not create one
            #expect(loaded.key.dataForDerivation == winner)
            #expect(loaded.createdKeyFile == nil)
            #expect(checks.withLock { $0 } == 1)
        }
    }

    @Test func aRefusalWithNoKeyFileStillThrowsAndCreatesNone() throws {
        try withTemporaryDirectory { directory in
            // Given a store whose key file is really gone
            let keyFile = directory.appendingPathComponent("keys/store.key")

            // When the loader is asked for its key
            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.openOrCreateKeyFile(
                    at: keyFile, protection: nil, refusingCreation: { _ in Self.lost })
            }

            // Then the refusal stands and no key file was made
            #expect(error?.code == .masterKeyNotFound)
            #expect(!FileManager.default.fileExists(atPath: keyFile.path))
        }
    }
}
