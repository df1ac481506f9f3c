/// A queue of use records, oldest first, that keeps one region of a W-TinyLFU table in LRU order.
///
/// The same device as the exact LRU table's queue (see ``ShardTable``): a record is current while its
/// stamp equals its slot's stamp (the referenced bit aside), and every later use of the slot, in any region, stamps it anew and so
/// makes the older records stale. The least recently used entry of the region is its oldest current
/// record. Stale records are dropped by ``compact(stamps:)``, which the table runs once the queue holds
/// about twice as many records as its region has entries.
@usableFromInline
struct RecencyQueue {
    /// Records, oldest first, from `start` on; records before `start` are spent.
    @usableFromInline var records: [RecencyRecord] = []
    @usableFromInline var start = 0

    @inlinable init() {}

    @inlinable
    mutating func append(_ record: RecencyRecord) {
        records.append(record)
    }

    /// The oldest current record's slot, spending the stale records in front of it; `nil` when none.
    @inlinable
    mutating func oldest(stamps: UnsafeMutablePointer<UInt32>) -> Int32? {
        while start < records.count {
            let record = records[start]
            if stamps[Int(record.slot)] & ~PolicyRegion.referencedBit == record.stamp { return record.slot }
            start += 1
        }
        return nil
    }

    /// Removes and returns the oldest current record's slot; `nil` when none.
    @inlinable
    mutating func popOldest(stamps: UnsafeMutablePointer<UInt32>) -> Int32? {
        guard let slot = oldest(stamps: stamps) else { return nil }
        start += 1
        return slot
    }

    /// Drops spent and stale records, keeping the current ones in order.
    ///
    /// - Complexity: O(*q*) in the records held.
    @usableFromInline
    mutating func compact(stamps: UnsafeMutablePointer<UInt32>) {
        var kept = 0
        let start = self.start
        records.withUnsafeMutableBufferPointer { records in
            for position in start..<records.count {
                let record = records[position]
                if stamps[Int(record.slot)] & ~PolicyRegion.referencedBit == record.stamp {
                    records[kept] = record
                    kept += 1
                }
            }
        }
        records.removeLast(records.count - kept)
        self.start = 0
    }

    /// Drops spent and stale records and gives the current ones the ticks after `last`, in order, in
    /// their records and their slots' stamps (keeping the stamps' region and referenced bits); `last`
    /// ends as the last tick given.
    ///
    /// - Complexity: O(*q*) in the records held.
    @usableFromInline
    mutating func renumber(stamps: UnsafeMutablePointer<UInt32>, after last: inout UInt32) {
        compact(stamps: stamps)
        let tickMask = PolicyRegion.referencedBit - 1
        for position in records.indices {
            last += 1
            let slot = Int(records[position].slot)
            let stamp = records[position].stamp & ~tickMask | last
            records[position].stamp = stamp
            stamps[slot] = stamps[slot] & PolicyRegion.referencedBit | stamp
        }
    }

    /// Forgets every record.
    @usableFromInline
    mutating func removeAll() {
        records = []
        start = 0
    }
}
