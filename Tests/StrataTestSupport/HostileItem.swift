import Foundation

/// Something an attacker with write access to a store folder plants (Docs/Security.md, "A hostile store
/// folder"): links where the store's folders and files belong (pointing at a ``Canary`` outside the store),
/// FIFOs where it reads, sparse files of absurd sizes, and counters near overflow.
///
/// The disk tier's tests and the `strata` tool's tests plant the same items; each suite picks the ones its
/// checks apply to and states what it expects of each.
public enum HostileItem: String, CaseIterable, Sendable {
    case temporaryFolderLink, entriesFolderLink, fanOutFolderLink, locksFolderLink, quarantineFolderLink
    case checkRecordLink, storeLockLink, statisticsLink, entryLink, keyLockLink
    case entryFIFO, checkRecordFIFO, statisticsFIFO, storeLockFIFO, keyLockFIFO
    case entrySparse, entrySparseWithHeader, checkRecordSparse, statisticsSparse, statisticsOverflow

    /// Whether the item sits on the key-check record, which stops the store from opening at all.
    public var isOnCheckRecord: Bool { [.checkRecordLink, .checkRecordFIFO, .checkRecordSparse].contains(self) }

    /// Plants the item in `store`, aiming links at `canary`; `victim` is the entry file name (64 hex digits)
    /// of the key the item sits on.
    ///
    /// - Throws: The file system's error, or `POSIXError` from the system call that planted it.
    public func plant(store: URL, canary: Canary, victim: String) throws {
        let root = store.path
        let entry = root + "/entries/" + victim.prefix(2) + "/" + victim
        let keyLock = root + "/locks/" + victim + ".lock"
        let target = canary.url.path
        let huge: Int64 = 200 << 30
        switch self {
        case .temporaryFolderLink: try Plant.link(at: root + "/tmp", to: target)
        case .entriesFolderLink: try Plant.link(at: root + "/entries", to: target)
        case .fanOutFolderLink: try Plant.link(at: root + "/entries/" + victim.prefix(2), to: target + "/ab")
        case .locksFolderLink: try Plant.link(at: root + "/locks", to: target)
        case .quarantineFolderLink:
            try Plant.link(at: root + "/quarantine", to: target)
            // A foreign folder where the victim's entry belongs: writing it moves that folder to quarantine.
            try? FileManager.default.removeItem(atPath: entry)
            try FileManager.default.createDirectory(atPath: entry + "/inner", withIntermediateDirectories: true)
        case .checkRecordLink: try Plant.link(at: root + "/store.check", to: target + "/notes.txt")
        case .storeLockLink: try Plant.link(at: root + "/store.lock", to: target + "/notes.txt")
        case .statisticsLink: try Plant.link(at: root + "/store.stats", to: target + "/store.stats")
        case .entryLink: try Plant.link(at: entry, to: target + "/notes.txt")
        case .keyLockLink: try Plant.link(at: keyLock, to: target + "/notes.txt")
        case .entryFIFO: try Plant.fifo(at: entry)
        case .checkRecordFIFO: try Plant.fifo(at: root + "/store.check")
        case .statisticsFIFO: try Plant.fifo(at: root + "/store.stats")
        case .storeLockFIFO: try Plant.fifo(at: root + "/store.lock")
        case .keyLockFIFO: try Plant.fifo(at: keyLock)
        case .entrySparse: try Plant.sparse(at: entry, size: huge, prefix: Data("STRE".utf8))
        case .entrySparseWithHeader:
            // A header whose lengths fix exactly the file's 200 GB size: only the size limit stops it.
            try Plant.sparse(at: entry, size: huge, prefix: Self.entryHeader(valueLength: huge - 88))
        case .checkRecordSparse:
            try Plant.sparse(at: root + "/store.check", size: huge, prefix: Data("STRK".utf8) + Data([1]))
        case .statisticsSparse: try Plant.sparse(at: root + "/store.stats", size: huge)
        case .statisticsOverflow:
            let near = "9223372036854775806"
            let json =
                "{\"format\":1,\"counters\":{\"hits\":\(near),\"misses\":\(near),\"insertions\":\(near),"
                + "\"evictions\":-7,\"expirations\":0,\"corruptEntriesRemoved\":0,\"readFailures\":0}}"
            try Data(json.utf8).write(to: URL(fileURLWithPath: root + "/store.stats"))
        }
    }

    /// A version-1 entry header (Docs/DiskFormat.md) with an 8-byte key and `valueLength` bytes of value.
    public static func entryHeader(valueLength: Int64) -> Data {
        var header = Data("STRE".utf8) + Data([1, 0, 0, 0])
        header += Data(count: 32)  // epoch, created, expires, cost
        header += withUnsafeBytes(of: UInt32(8).bigEndian) { Data($0) }
        header += withUnsafeBytes(of: UInt64(valueLength).bigEndian) { Data($0) }
        return header
    }
}

/// The names of a store's entry files (64 hex digits, Docs/DiskFormat.md), found below `entries/` in their
/// fan-out folders.
public func entryFileNames(inStore store: URL) -> Set<String> {
    let entries = store.appendingPathComponent("entries").path
    let files = (try? FileManager.default.subpathsOfDirectory(atPath: entries)) ?? []
    return Set(files.filter { $0.count == 67 }.map { String($0.dropFirst(3)) })
}
