import CacheCore
import CacheCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Key generations (epochs) and the key-check record, `store.check`: the epoch this process reads and
/// writes with, the status of the record it came from, reading and checking a record, and making the
/// record of a new generation.
///
/// No folder opening, locking or writing: the store passes the folder to read from and writes the
/// records this type makes (DiskStore+KeyGenerations.swift), so this type is the one place that knows
/// how an epoch follows from the record and the master key.
///
/// Thread safety: the epoch and the record status change together under this type's own lock. When the
/// epoch changes, the store resets its index afterwards (StoreAccounting); a reset index is only ever
/// rebuilt from the folder, so nothing is lost in the moment between the two.
final class KeyGenerations: Sendable {
    /// The epoch this process writes with, and the status of the check record it was read from (`nil`
    /// until one was read).
    struct Current {
        var epoch: Epoch
        var status: FileStatus?
    }

    let master: MasterKey
    let layout: StoreLayout
    let storeName: String
    private let state: Locked<Current>

    /// Starts with the epoch of an all-zero salt, which no record holds, until ``adopt(_:status:)``.
    init(master: MasterKey, layout: StoreLayout, storeName: String) throws {
        self.master = master
        self.layout = layout
        self.storeName = storeName
        state = Locked(Current(epoch: try Epoch.derive(master: master, salt: Data(count: KeyCheckRecord.saltSize))))
    }

    /// The epoch and record status in use.
    var current: Current { state.withLock { $0 } }

    /// Makes `epoch`, read from a record with `status`, the one in use.
    ///
    /// - Returns: Whether the epoch changed (the index must then be reset).
    @discardableResult
    func adopt(_ epoch: Epoch, status: FileStatus?) -> Bool {
        state.withLock { current in
            defer { current = Current(epoch: epoch, status: status) }
            return current.epoch.id != epoch.id
        }
    }

    /// The epoch a record with `salt` names.
    func epoch(salt: Data) throws -> Epoch {
        try Epoch.derive(master: master, salt: salt)
    }

    /// A key-check record for a new generation with `salt`, or a fresh random one.
    func makeRecord(salt: Data? = nil) throws -> (salt: Data, record: Data) {
        let salt = try salt ?? CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize)
        return (salt, try KeyCheckRecord.make(salt: salt, master: master))
    }

    /// Reads and checks `store.check` in the store folder `root`; `nil` when it does not exist.
    ///
    /// The file is read by ``KeyCheckRecord/readFile(in:path:storeName:)``: a FIFO, a link or a file of the
    /// wrong size there is a damaged record (a clear error; nothing is deleted).
    func readRecord(in root: Directory) throws -> (Epoch, FileStatus)? {
        let path = layout.checkRecord
        guard let (data, status) = try KeyCheckRecord.readFile(in: root, path: path, storeName: storeName) else {
            return nil
        }
        let salt = try KeyCheckRecord.salt(from: data, master: master, path: path, storeName: storeName)
        return (try epoch(salt: salt), status)
    }
}
