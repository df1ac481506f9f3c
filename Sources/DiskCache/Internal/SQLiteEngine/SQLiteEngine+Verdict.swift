import CacheCore
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a row is, judged once for reads, `verify()` and `removeExpired()` alike.
enum SQLiteRowVerdict {
    /// Served: the record, its tag block (if any) still leading its value.
    case live(EntryRecord)
    /// Past its expiry, inside its stale window: served only to loads that accept stale values; kept.
    case servableStale(EntryRecord)
    /// Past its expiry and any stale window: removed, counted as an expiration.
    case expired
    /// A tag it carries was removed since it was stamped: removed.
    case fencedByTag
    /// Damaged, swapped, edited, or of an earlier epoch: removed, counted as corrupt.
    case corrupt(CorruptionReason)
    /// A counter of one of its tags is damaged: a miss, but kept (the file engine's rule), reported.
    case tagsUnknown(EntryRecord)
}

extension SQLiteEngine {
    /// Judges `row`: its seal, its key (`keyBytes`, or, when `nil`, that its key's keyed hash is its name), its
    /// columns against its header, its tags, then the kernel's liveness rule.
    ///
    /// - Throws: Only failures other than the row's own damage (the database, the back end).
    func judge(_ row: inout SQLiteEntryRow, keyBytes: Data?) throws -> SQLiteRowVerdict {
        let record: EntryRecord
        switch try open(&row) {
        case .failure(let reason): return .corrupt(reason)
        case .success(let opened): record = opened
        }
        if let keyBytes {
            guard record.keyBytes == keyBytes else { return .corrupt(.misplaced) }
        } else {
            guard try namer.hexName(of: record.keyBytes) == row.name else { return .corrupt(.misplaced) }
        }
        var stamped: [String: UInt64] = [:]
        var current: [String: UInt64] = [:]
        if record.header.hasTags {
            guard let (versions, _) = TagBlock.decode(record.valueBytes) else { return .corrupt(.badTagBlock) }
            stamped = versions
            do {
                current = try currentTagVersions(of: versions.keys, damagedThrows: true)
            } catch let error as CacheError where error.code == .corruptEntry {
                return .tagsUnknown(record)
            }
        }
        switch record.header.stamp(tagVersions: stamped).liveness(
            currentEpoch: (row.epoch ?? currentEpoch).id, currentTagVersions: current, at: clock.now)
        {
        case .live: return .live(record)
        case .servableStale: return .servableStale(record)
        case .expired: return .expired
        case .fencedByTag: return .fencedByTag
        case .wrongEpoch: return .corrupt(.oldEpoch)
        }
    }

    /// `record` with its tag block taken off its value and its tags set, as reads return it.
    static func stripped(_ record: EntryRecord) -> EntryRecord {
        guard record.header.hasTags, let (versions, value) = TagBlock.decode(record.valueBytes) else { return record }
        var record = record
        record.valueBytes = value
        record.tags = Set(versions.keys)
        return record
    }
}
