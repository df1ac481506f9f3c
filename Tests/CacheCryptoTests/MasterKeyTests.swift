import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import CacheCrypto

/// Master keys, key files and the derivation of store keys.
@Suite struct MasterKeyTests {
    // MARK: - MasterKey

    @Test func masterKeyAcceptsExactly32Bytes() throws {
        let bytes = Data((0..<32).map { UInt8($0) })
        let key = try MasterKey(bytes: bytes)
        #expect(key.dataForDerivation == bytes)
    }

    @Test(arguments: [0, 16, 31, 33, 64])
    func masterKeyOfWrongSizeIsInvalidKey(byteCount: Int) {
        let error = #expect(throws: CacheError.self) { try MasterKey(bytes: Data(count: byteCount)) }
        #expect(error?.code == .invalidMasterKey)
        let loaded = #expect(throws: CacheError.self) {
            try MasterKeyLoader.load(.masterKey(Data(count: byteCount)), storeName: "test")
        }
        #expect(loaded?.code == .invalidMasterKey)
    }

    @Test func masterKeyNeverPrintsItsBytes() throws {
        let key = try MasterKey(bytes: Data(repeating: 0xAB, count: 32))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), "\(key)", dumped] {
            #expect(text.contains("redacted"))
            #expect(!text.lowercased().contains("ab"))
            #expect(!text.contains("171"))  // 0xAB in decimal, as a byte array would print
        }
    }

    // MARK: - Key files

    @Test func keyFileIsCreatedOwnerOnlyInsideOwnerOnlyFolder() throws {
        try withTemporaryDirectory { directory in
            // Given a key file path whose folders do not exist yet
            let keyFile = directory.appendingPathComponent("keys/nested/store.key")

            // When the key is loaded for the first time
            let key = try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")

            // Then the file holds the 32 key bytes with mode 0600, in folders with mode 0700
            #expect(try Data(contentsOf: keyFile) == key.dataForDerivation)
            #expect(try permissions(of: keyFile) == 0o600)
            #expect(try permissions(of: keyFile.deletingLastPathComponent()) == 0o700)
            #expect(try permissions(of: directory.appendingPathComponent("keys")) == 0o700)
            // and no temporary file is left beside it.
            let siblings = try FileManager.default.contentsOfDirectory(
                atPath: keyFile.deletingLastPathComponent().path)
            #expect(siblings == ["store.key"])
        }
    }

    @Test func reloadingAKeyFileReturnsTheSameKey() throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            let first = try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            let second = try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            #expect(first == second)
            let derivedFirst = try StoreSubkeys.derive(master: first, epochSalt: Data(count: 32))
            let derivedSecond = try StoreSubkeys.derive(master: second, epochSalt: Data(count: 32))
            #expect(derivedFirst.encryptionSubkey == derivedSecond.encryptionSubkey)
        }
    }

    @Test func existingKeyFileIsReadNotReplaced() throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            let bytes = Data((100..<132).map { UInt8($0) })
            try writeFile(bytes, to: keyFile, mode: 0o600)

            let key = try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")

            #expect(key.dataForDerivation == bytes)
        }
    }

    @Test func separateKeyFilesHoldDifferentKeys() throws {
        try withTemporaryDirectory { directory in
            let first = try MasterKeyLoader.load(
                .masterKeyFile(directory.appendingPathComponent("a.key")), storeName: "a")
            let second = try MasterKeyLoader.load(
                .masterKeyFile(directory.appendingPathComponent("b.key")), storeName: "b")
            #expect(first != second)
        }
    }

    @Test(arguments: [0, 1, 31, 33, 100])
    func keyFileOfWrongSizeIsInvalidKeyAndLeftAlone(byteCount: Int) throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            let contents = Data(repeating: 7, count: byteCount)
            try writeFile(contents, to: keyFile, mode: 0o600)

            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            }

            #expect(error?.code == .invalidMasterKey)
            #expect(error?.path == keyFile.path)
            #expect(error?.message.contains("\(byteCount) bytes") == true)
            #expect(try Data(contentsOf: keyFile) == contents)
        }
    }

    @Test(arguments: [0o640, 0o604, 0o660, 0o644, 0o666, 0o620])
    func keyFileOpenToGroupOrOthersIsInvalidKey(mode: Int) throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            try writeFile(Data(count: 32), to: keyFile, mode: mode_t(mode))

            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            }

            #expect(error?.code == .invalidMasterKey)
            #expect(error?.path == keyFile.path)
            #expect(error?.message.contains("chmod 600 '\(keyFile.path)'") == true)
        }
    }

    @Test func ownerReadOnlyKeyFileIsAccepted() throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            try writeFile(Data(repeating: 1, count: 32), to: keyFile, mode: 0o400)
            let key = try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            #expect(key.dataForDerivation == Data(repeating: 1, count: 32))
        }
    }

    @Test func folderAtTheKeyFilePathIsInvalidKey() throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            try FileManager.default.createDirectory(at: keyFile, withIntermediateDirectories: false)
            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            }
            #expect(error?.code == .invalidMasterKey)
        }
    }

    @Test func fifoAtTheKeyFilePathIsInvalidKeyWithoutHanging() throws {
        try withTemporaryDirectory { directory in
            // Opening a FIFO for reading blocks until a writer appears, unless the loader opens it non-blocking.
            let keyFile = directory.appendingPathComponent("store.key")
            #expect(mkfifo(keyFile.path, 0o600) == 0)
            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            }
            #expect(error?.code == .invalidMasterKey)
        }
    }

    @Test func nonFileURLIsInvalidArgument() throws {
        let url = try #require(URL(string: "https://example.com/store.key"))
        let error = #expect(throws: CacheError.self) {
            try MasterKeyLoader.load(.masterKeyFile(url), storeName: "store")
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(.enabled(if: geteuid() != 0, "root reads files whatever their mode"))
    func unreadableKeyFileIsPermissionDenied() throws {
        try withTemporaryDirectory { directory in
            let keyFile = directory.appendingPathComponent("store.key")
            try writeFile(Data(count: 32), to: keyFile, mode: 0o000)
            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(.masterKeyFile(keyFile), storeName: "store")
            }
            #expect(error?.code == .permissionDenied)
        }
    }

    @Test func fileInTheWayOfTheKeyFolderIsAnIOError() throws {
        try withTemporaryDirectory { directory in
            let blocker = directory.appendingPathComponent("keys")
            try writeFile(Data("not a folder".utf8), to: blocker, mode: 0o600)
            let error = #expect(throws: CacheError.self) {
                try MasterKeyLoader.load(
                    .masterKeyFile(blocker.appendingPathComponent("store.key")), storeName: "store")
            }
            #expect(error?.code != nil)
            #expect(error?.code != .invalidMasterKey)
        }
    }

    @Test(arguments: 0..<5)
    func concurrentCreationByEightThreadsYieldsOneKey(round: Int) throws {
        try withTemporaryDirectory { directory in
            // Given no key file yet
            let keyFile = directory.appendingPathComponent("keys/store-\(round).key")
            let results = Locked<[Result<MasterKey, CacheError>]>([])

            // When 8 threads load it at the same moment
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let result = Result { () throws(CacheError) -> MasterKey in
                    do {
                        return try MasterKeyLoader.loadOrCreateKeyFile(at: keyFile)
                    } catch let error as CacheError {
                        throw error
                    } catch {
                        throw CacheError(.io, "\(error)")
                    }
                }
                results.withLock { $0.append(result) }
            }

            // Then all 8 got the key now in the file, and only that file is left.
            let keys = try results.withLock { $0 }.map { try $0.get() }
            let onDisk = try MasterKey(bytes: Data(contentsOf: keyFile))
            #expect(keys.count == 8)
            #expect(keys.allSatisfy { $0 == onDisk })
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: keyFile.deletingLastPathComponent().path)
                    == ["store-\(round).key"])
        }
    }

    // MARK: - Default location

    @Test func defaultMasterKeyFileUsesAbsoluteXDGDataHome() throws {
        let url = try MasterKeyLocation.xdgKeysFolder(
            environment: ["XDG_DATA_HOME": "/data/alice", "HOME": "/home/alice"])
        #expect(url.path == "/data/alice/strata/keys")
    }

    @Test(arguments: [nil, "", "relative/data"])
    func defaultMasterKeyFileFallsBackToHomeLocalShare(dataHome: String?) throws {
        var environment = ["HOME": "/home/alice"]
        environment["XDG_DATA_HOME"] = dataHome
        let url = try MasterKeyLocation.xdgKeysFolder(environment: environment)
        #expect(url.path == "/home/alice/.local/share/strata/keys")
    }

    @Test func defaultMasterKeyFileIsNamedAfterTheStore() throws {
        let url = try MasterKeyLoader.defaultMasterKeyFileURL(
            storeName: "images", environment: ["XDG_DATA_HOME": "/data/alice"])
        #if canImport(Darwin)
        #expect(url.path.hasSuffix("/Strata/keys/images.key"))
        #else
        #expect(url.path == "/data/alice/strata/keys/images.key")
        #endif
    }

    @Test(arguments: ["", ".", "..", "a/b", "/etc/passwd", "nul\0byte", String(repeating: "x", count: 252)])
    func storeNameThatCannotNameAFileIsInvalidArgument(storeName: String) {
        let error = #expect(throws: CacheError.self) {
            try MasterKeyLoader.defaultMasterKeyFileURL(storeName: storeName, environment: ["HOME": "/home/alice"])
        }
        #expect(error?.code == .invalidArgument)
    }

    // MARK: - StoreSubkeys

    @Test func storeKeysMatchTheDocumentedDerivation() throws {
        // Expected values computed independently with RFC 5869 HKDF-SHA-256 (Python's hmac module) from
        // master = 00 01 … 1f, salt = 20 21 … 3f and the documented info strings. If this fails, existing
        // stores can no longer be read: the derivation is part of the on-disk format.
        let master = try MasterKey(bytes: Data((0..<32).map { UInt8($0) }))
        let keys = try StoreSubkeys.derive(master: master, epochSalt: Data((32..<64).map { UInt8($0) }))
        #expect(hexString(keys.encryptionSubkey) == "c67c0595d7a8d07da115d375d1f5f57c1dd183ac4fb561b8adadc5815d43b694")
        #expect(hexString(keys.namingSubkey) == "eafab2f5a6d3383dc793a22365fe9868b3d566d73373e0b733ee90a6ce250b8c")
        // The naming key alone (what a store derives under its fixed naming salt) is the same bytes.
        #expect(
            hexString(try StoreSubkeys.namingSubkey(master: master, epochSalt: Data((32..<64).map { UInt8($0) })))
                == "eafab2f5a6d3383dc793a22365fe9868b3d566d73373e0b733ee90a6ce250b8c")
        #expect(throws: CacheError.self) { try StoreSubkeys.namingSubkey(master: master, epochSalt: Data()) }
        #expect(
            hexString(try StoreSubkeys.keyCheckSubkey(master: master))
                == "0f7f169e76f550c6e633704d86569060076d90eb5b6524e021ab9080793cce96")
    }

    @Test func storeKeysAreDeterministic() throws {
        let master = try MasterKey(bytes: CryptoBackend.randomBytes(count: 32))
        let salt = try CryptoBackend.randomBytes(count: 32)
        let first = try StoreSubkeys.derive(master: master, epochSalt: salt)
        let second = try StoreSubkeys.derive(master: master, epochSalt: salt)
        #expect(first.encryptionSubkey == second.encryptionSubkey)
        #expect(first.namingSubkey == second.namingSubkey)
        #expect(try StoreSubkeys.keyCheckSubkey(master: master) == StoreSubkeys.keyCheckSubkey(master: master))
    }

    @Test func storeKeysDifferPerPurpose() throws {
        let master = try MasterKey(bytes: CryptoBackend.randomBytes(count: 32))
        let keys = try StoreSubkeys.derive(master: master, epochSalt: CryptoBackend.randomBytes(count: 32))
        let keyCheck = try StoreSubkeys.keyCheckSubkey(master: master)
        #expect(keys.encryptionSubkey.count == 32)
        #expect(keys.namingSubkey.count == 32)
        #expect(keyCheck.count == 32)
        #expect(Set([keys.encryptionSubkey, keys.namingSubkey, keyCheck, master.dataForDerivation]).count == 4)
    }

    @Test func storeKeysDifferPerEpochSaltButKeyCheckKeyDoesNot() throws {
        let master = try MasterKey(bytes: CryptoBackend.randomBytes(count: 32))
        let old = try StoreSubkeys.derive(master: master, epochSalt: Data(repeating: 1, count: 32))
        let new = try StoreSubkeys.derive(master: master, epochSalt: Data(repeating: 2, count: 32))
        #expect(old.encryptionSubkey != new.encryptionSubkey)
        #expect(old.namingSubkey != new.namingSubkey)
    }

    @Test func storeKeysDifferPerMasterKey() throws {
        let salt = Data(repeating: 9, count: 32)
        let first = try StoreSubkeys.derive(master: MasterKey(bytes: Data(repeating: 1, count: 32)), epochSalt: salt)
        let second = try StoreSubkeys.derive(master: MasterKey(bytes: Data(repeating: 2, count: 32)), epochSalt: salt)
        #expect(first.encryptionSubkey != second.encryptionSubkey)
        #expect(first.namingSubkey != second.namingSubkey)
        #expect(
            try StoreSubkeys.keyCheckSubkey(master: MasterKey(bytes: Data(repeating: 1, count: 32)))
                != StoreSubkeys.keyCheckSubkey(master: MasterKey(bytes: Data(repeating: 2, count: 32))))
    }

    @Test func emptyEpochSaltIsInvalidArgument() throws {
        let master = try MasterKey(bytes: Data(count: 32))
        let error = #expect(throws: CacheError.self) { try StoreSubkeys.derive(master: master, epochSalt: Data()) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func storeKeysNeverPrintTheirBytes() throws {
        let keys = try StoreSubkeys.derive(master: MasterKey(bytes: Data(count: 32)), epochSalt: Data(count: 32))
        var dumped = ""
        dump(keys, to: &dumped)
        let hex = hexString(keys.encryptionSubkey)
        for text in [String(describing: keys), String(reflecting: keys), dumped] {
            #expect(text.contains("redacted"))
            #expect(!text.contains(hex.prefix(8)))
        }
    }
}
