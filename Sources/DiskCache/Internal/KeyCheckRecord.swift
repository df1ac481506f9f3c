import CacheCore
import CacheCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key-check record, `store.check`: the current epoch salt and a known plaintext sealed under a subkey
/// derived from the master key only (``MasterKeyCheck``), so a store opened with another master key is told
/// apart from a damaged one. This file holds the disk layout; Docs/DiskFormat.md is the specification.
enum KeyCheckRecord {
    static let magic = Data("STRK".utf8)
    /// The version of a file-engine store's record.
    static let version: UInt8 = 1
    /// The version of a SQLite-engine store's record: the same layout, whose version alone tells the engine
    /// (so a build that knows only files refuses the store as a newer format instead of reading it as empty).
    /// Its salt is not an epoch salt: that store keeps its epoch in its database.
    static let sqliteVersion: UInt8 = 2
    static let saltSize = 32
    static let fingerprintSize = MasterKeyCheck.fingerprintByteCount
    static let headerSize = 8 + saltSize + fingerprintSize  // magic, version, 3 reserved, salt, fingerprint
    static let knownPlaintext = Data("strata.disk.key-check.v1".utf8)
    static let fingerprintContext = Data("strata.disk.key-fingerprint.v1".utf8)
    static var size: Int { headerSize + MasterKeyCheck.sealedByteCount(plaintextByteCount: knownPlaintext.count) }

    static func make(salt: Data, master: MasterKey, version: UInt8 = version) throws -> Data {
        let checkSubkey = try StoreSubkeys.keyCheckSubkey(master: master)
        var header = Data(capacity: headerSize)
        header.append(magic)
        header.append(version)
        header.append(contentsOf: [0, 0, 0])
        header.append(salt)
        header.append(try MasterKeyCheck.fingerprint(checkSubkey: checkSubkey, context: fingerprintContext))
        var file = header
        file.append(try MasterKeyCheck.seal(knownPlaintext, associatedData: header, checkSubkey: checkSubkey))
        return file
    }

    /// The error for a damaged record at `path` (nothing is deleted; the user restores or deletes it).
    static func damaged(_ why: String, path: String, storeName: String) -> CacheError {
        CacheError(
            .corruptEntry,
            "the key-check record of store '\(storeName)' is damaged (\(why)); no entry was deleted. "
                + "Restore the file, or delete it to start a new key epoch (existing entries then become "
                + "unreadable and are purged)",
            path: path)
    }

    /// Checks `file` against `master` and returns the epoch salt.
    ///
    /// - Throws: ``CacheError/Code/wrongMasterKey`` when the record was made with another master key,
    ///   ``CacheError/Code/unsupportedFormat`` for an unknown version (or, for the file engine, the SQLite
    ///   engine's: the store was migrated under it), ``CacheError/Code/corruptEntry``
    ///   when the record is damaged although the key is right. Nothing is deleted in any case.
    static func salt(
        from file: Data, master: MasterKey, path: String, storeName: String, version: UInt8 = version
    ) throws -> Data {
        func damaged(_ why: String) -> CacheError { Self.damaged(why, path: path, storeName: storeName) }
        guard file.count >= 5, file.prefix(4) == magic else { throw damaged("bad magic or truncated") }
        guard file[file.startIndex + 4] == version else {
            if version == Self.version && file[file.startIndex + 4] == sqliteVersion {
                throw CacheError(
                    .unsupportedFormat,
                    "store '\(storeName)' was moved to the SQLite engine by a migration while this instance used it as "
                        + "a file store; open the store again", path: path)
            }
            throw CacheError(
                .unsupportedFormat,
                "store '\(storeName)' uses key-check format version \(file[file.startIndex + 4]); this build reads "
                    + "versions \(Self.version) (the file engine) and \(Self.sqliteVersion) (the SQLite engine)",
                path: path)
        }
        guard file.count == size else { throw damaged("wrong length \(file.count)") }
        let checkSubkey = try StoreSubkeys.keyCheckSubkey(master: master)
        let storedFingerprint = file.bytes(at: 8 + saltSize, count: fingerprintSize)
        let fingerprint = try MasterKeyCheck.fingerprint(checkSubkey: checkSubkey, context: fingerprintContext)
        guard storedFingerprint == fingerprint else {
            // The seal authenticates the header as it was written, fingerprint included: if it opens with this
            // key's fingerprint put back, the key is right and only the fingerprint's bytes were damaged.
            var written = file.bytes(at: 0, count: 8 + saltSize)
            written.append(fingerprint)
            let opensWithThisKey = try? MasterKeyCheck.opens(
                file.bytes(at: headerSize, count: size - headerSize), to: knownPlaintext, associatedData: written,
                checkSubkey: checkSubkey)
            if opensWithThisKey == true { throw damaged("its key fingerprint is damaged; the master key is right") }
            throw CacheError(
                .wrongMasterKey,
                "store '\(storeName)' was sealed with a different master key; nothing was changed or deleted. "
                    + "Open it with its own master key, or use another directory", path: path)
        }
        do {
            let opens = try MasterKeyCheck.opens(
                file.bytes(at: headerSize, count: size - headerSize), to: knownPlaintext,
                associatedData: file.bytes(at: 0, count: headerSize), checkSubkey: checkSubkey)
            guard opens else { throw damaged("unexpected contents") }
        } catch CryptoFailure.authenticationFailed {
            throw damaged("authentication failed although the key fingerprint matches")
        }
        return file.bytes(at: 8, count: saltSize)
    }

    /// Reads the record file in the store folder `root`, for either engine, with the status of the file read;
    /// `nil` when it does not exist.
    ///
    /// The file is opened without following a link and without blocking, and must be a regular file of the
    /// record's exact size before a byte is read: a FIFO, a link or a huge sparse file there is a damaged record
    /// (a clear error; nothing is deleted), never a hang or a large allocation.
    static func readFile(in root: Directory, path: String, storeName: String) throws -> (Data, FileStatus)? {
        let opened: Result<Int32, FileError> = Result { () throws(FileError) in
            try root.openFile(StoreLayout.checkRecordName, O_RDONLY)
        }
        if case .failure(let error) = opened {
            if error.isNotFound { return nil }
            if error.isForeignItem {
                throw damaged("a symbolic link, not a regular file", path: path, storeName: storeName)
            }
        }
        let fd = try opened.get()
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: path)
        guard status.isRegularFile else {
            throw damaged("\(status.kind), not a regular file", path: path, storeName: storeName)
        }
        guard status.size == size else {
            throw damaged("wrong length \(status.size)", path: path, storeName: storeName)
        }
        return (try FileSystem.readSmallFile(fd, count: size, path: path), status)
    }
}
