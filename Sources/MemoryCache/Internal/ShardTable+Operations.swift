import CacheCore

extension ShardTable {
    // MARK: - Reads

    /// Reads `key` without a clock reading: answers only when the entry is absent or never expires.
    ///
    /// A hit refreshes recency, counts a hit and fills in `value`, `expiresAt` and (when `wantsCost`)
    /// `cost`; a miss counts a miss; ``ShardReadStatus/needsClock`` changes nothing, and the caller
    /// retries with ``read(_:now:wantsCost:value:expiresAt:cost:)``.
    @inlinable
    func readWithoutClock(
        _ key: Key, wantsCost: Bool, value: inout Value?, expiresAt: inout Double, cost: inout Int,
        tagStamp: inout TagStamp?
    ) -> ShardReadStatus {
        guard let entry = index[key] else {
            counters.misses += 1
            return .miss
        }
        guard !entry.canExpire else { return .needsClock }
        // A tag removed since the entry was stored: `read` drops it (and hands its value back).
        if entry.isTagged, !isCurrent(entry) { return .needsClock }
        countHit(entry.slot)
        value = entry.value
        expiresAt = .infinity
        // The cost sits in its own buffer: read it only for callers that return it.
        if wantsCost {
            cost = costs[Int(entry.slot)]
            if entry.isTagged { tagStamp = tagStamps[entry.slot] }
        }
        return .hit
    }

    /// Reads `key` at `now` (seconds since the reference date), dropping it if it has expired.
    ///
    /// Fills in the outputs like ``readWithoutClock(_:wantsCost:value:expiresAt:cost:)``, and when `wantsCost`
    /// the stale-until instant of an entry a load kept stale (never-expiring entries have none); an expired
    /// entry's value is put in `value` too, to be released by the caller outside the lock.
    @inlinable
    func read(
        _ key: Key, now: Double, wantsCost: Bool, value: inout Value?, expiresAt: inout Double, cost: inout Int,
        tagStamp: inout TagStamp?, staleUntil: inout Double?
    ) -> ShardReadStatus {
        guard let entry = index[key] else {
            counters.misses += 1
            return .miss
        }
        let entryExpiresAt = expiry(of: entry)
        if entry.isTagged, !isCurrent(entry) {
            settleBufferedHits()
            counters.misses += 1
            index.removeValue(forKey: key)
            freeSlot(entry.slot)
            value = entry.value
            return .expired
        }
        if entryExpiresAt <= now {
            settleBufferedHits()
            counters.misses += 1
            // Kept for loads that may serve it stale: a miss for this plain read, but not dropped.
            if !staleUntils.isEmpty, let staleUntil = staleUntils[entry.slot], staleUntil > now { return .miss }
            counters.expirations += 1
            index.removeValue(forKey: key)
            freeSlot(entry.slot)
            value = entry.value
            return .expired
        }
        countHit(entry.slot)
        value = entry.value
        expiresAt = entryExpiresAt
        if wantsCost {
            cost = costs[Int(entry.slot)]
            if entry.isTagged { tagStamp = tagStamps[entry.slot] }
            // A whole entry carries its stale-until instant, so that a tier it is written back into keeps
            // it stale as long as this one would.
            if !staleUntils.isEmpty { staleUntil = staleUntils[entry.slot] }
        }
        return .hit
    }

    /// Reads `key` at `now` for a load that may serve a stale entry: a live entry as ``read(_:now:wantsCost:value:expiresAt:cost:)``
    /// returns it (recency refreshed, a hit counted), or an expired one still before its stale-until
    /// instant (left in place, nothing counted).
    ///
    /// - Returns: The value, expiry, stale-until instant (`nil` when none) and cost, or `nil`.
    @inlinable
    func readIncludingStale(
        _ key: Key, now: Double
    ) -> (value: Value, expiresAt: Double, staleUntil: Double?, cost: Int, tags: Set<String>)? {
        guard let entry = index[key] else {
            counters.misses += 1
            return nil
        }
        // A removed tag ends an entry for every read, stale ones included. Such an entry, and an expired
        // one not kept for stale reads, is a miss, as for a plain read (left in place: dropping it would
        // hand its value back for release outside the lock, and the next plain read or purge drops it).
        if entry.isTagged, !isCurrent(entry) {
            counters.misses += 1
            return nil
        }
        let entryExpiresAt = expiry(of: entry)
        let staleUntil = staleUntils.isEmpty ? nil : staleUntils[entry.slot]
        if entryExpiresAt <= now {
            guard let staleUntil, staleUntil > now else {
                counters.misses += 1
                return nil
            }
        } else {
            countHit(entry.slot)
        }
        let tags = entry.isTagged ? tagStamps[entry.slot]?.tags ?? [] : []
        return (entry.value, entryExpiresAt, staleUntil, costs[Int(entry.slot)], tags)
    }

    // MARK: - Writes

    /// Stores `value` under `key` and lets the policy admit it (`admit`), which evicts until the table is
    /// within its limits: under LRU the new entry is the most recently used, and eviction starts from the
    /// least recently used end.
    ///
    /// An entry that cannot be kept — the table keeps nothing, its cost alone exceeds the cost limit, or
    /// it has already expired at `now` — is not stored, evicts nothing, and removes the earlier entry for
    /// `key`, because the caller replaced it.
    ///
    /// - Parameters:
    ///   - cost: The entry's cost, already made non-negative.
    ///   - expiresAt: Seconds since the reference date, `.infinity` for never; NaN counts as expired.
    ///   - now: The clock reading for an entry that can expire, `-.infinity` when none was taken.
    /// - Returns: The values that left the table (the replaced one and any evicted ones).
    @inlinable
    func store(
        _ value: Value, forKey key: Key, cost: Int, expiresAt: Double, now: Double, staleUntil: Double? = nil,
        tagStamp: TagStamp? = nil
    ) -> Released {
        settleBufferedHits()
        var released = Released()
        // `!(expiresAt > now)` rather than `expiresAt <= now`: a NaN expiry counts as already expired,
        // not as one that never comes.
        if countLimit == 0 || costLimit == 0 || cost > costLimit || !(expiresAt > now)
            || tagStamp.map({ !$0.isCurrent }) == true
        {
            if let old = index.removeValue(forKey: key) {
                freeSlot(old.slot)
                released.first = old.value
            }
            return released
        }
        // Keep the running total representable: costs near `Int.max` (with no cost limit, or a limit
        // above `Int.max / 2`) would otherwise overflow it. Evicting first makes room the usual way, after
        // the entry being replaced, whose cost is freed anyway, has left (it was evicted, and others with
        // it, while its cost still counted; found by an adversarial run).
        var replacedFirst = false
        if Int.max - totalCost < cost {
            if let replaced = index.removeValue(forKey: key) {
                freeSlot(replaced.slot)
                released.first = replaced.value
                replacedFirst = true
            }
            while Int.max - totalCost < cost && !index.isEmpty {
                released.append(evictVictim())
            }
        }
        // A replaced entry moves to a fresh slot, so that one hash operation both stores the new entry
        // and hands back the old one.
        let slot = allocateSlot()
        (keys + Int(slot)).initialize(to: key)
        let canExpire = expiresAt != .infinity
        if canExpire { expiries[Int(slot)] = expiresAt }
        if canExpire, let staleUntil, staleUntil > expiresAt { staleUntils[slot] = staleUntil }
        if let tagStamp {
            tagStamps[slot] = tagStamp
            recordTagCheck(slot, generation: 0)
        }
        let entry = Entry(value: value, slot: slot, canExpire: canExpire, isTagged: tagStamp != nil)
        let old = index.updateValue(entry, forKey: key)
        if let old {
            freeSlot(old.slot)
            released.first = old.value
        }
        costs[Int(slot)] = cost
        totalCost += cost
        counters.insertions += 1
        admit(slot, cost: cost, replacing: old != nil || replacedFirst, into: &released)
        return released
    }

    /// Removes the entry for `key`.
    ///
    /// - Returns: The removed value with its expiry (seconds since the reference date) and whether a tag
    ///   of it was removed since it was stored (a read would no longer return it), or `nil`.
    @inlinable
    func remove(_ key: Key) -> (value: Value, expiresAt: Double, tagRemoved: Bool)? {
        settleBufferedHits()
        guard let entry = index.removeValue(forKey: key) else { return nil }
        let expiresAt = expiry(of: entry)
        // Checked before `freeSlot`, which drops the entry's tag stamp.
        let tagRemoved = entry.isTagged && !isCurrent(entry)
        freeSlot(entry.slot)
        return (entry.value, expiresAt, tagRemoved)
    }

    /// Removes every entry whose expiry is at or before `now`, counting each as an expiration.
    ///
    /// - Complexity: O(*n*) in the number of entries held.
    func removeExpired(now: Double, into released: inout Released) -> Int {
        settleBufferedHits()
        let expired = index.filter { key, entry in
            (entry.isTagged && !isCurrent(entry))
                || (expiry(of: entry) <= now
                    && (staleUntils.isEmpty || !(staleUntils[entry.slot].map { $0 > now } ?? false)))
        }
        for (key, entry) in expired {
            index.removeValue(forKey: key)
            freeSlot(entry.slot)
            released.append(entry.value)
        }
        counters.expirations += expired.count
        return expired.count
    }

    /// Evicts the policy's victims (least recently used entries under LRU) until at most `count` remain.
    ///
    /// - Complexity: O(*k*) in the number of entries evicted.
    func trim(toCount count: Int, into released: inout Released) {
        settleBufferedHits()
        let before = index.count
        while index.count > max(count, 0) {
            released.append(evictVictim())
        }
        // Only a trim that evicted starts a new period: a maintenance trim that finds the table within
        // bounds, called more often than a period lasts, would otherwise switch the check off.
        if policy.admitsByFrequency, index.count < before { frequencyPolicy.noteTrimmed() }
    }

    /// Evicts the policy's victims until the total cost is at most `cost`.
    ///
    /// - Complexity: O(*k*) in the number of entries evicted.
    func trim(toCost cost: Int, into released: inout Released) {
        settleBufferedHits()
        let before = index.count
        while totalCost > max(cost, 0) && !index.isEmpty {
            released.append(evictVictim())
        }
        if policy.admitsByFrequency, index.count != before { frequencyPolicy.noteTrimmed() }
    }

    /// Whether a tagged entry's tags all still have the versions it was stored with: at once when no tag
    /// was removed since the entry was last checked, else through its stamp's counters.
    @inlinable
    func isCurrent(_ entry: Entry) -> Bool {
        // Read before the counters: a removal advances its counter first and the generation second, so a
        // check that finds the counters current was current at this generation.
        let generation = tagGeneration.value.load()
        if let tagChecks, tagChecks[Int(entry.slot)] == generation { return true }
        guard tagStamps[entry.slot]?.isCurrent ?? true else { return false }
        recordTagCheck(entry.slot, generation: generation)
        return true
    }

    /// Notes that the tagged entry in `slot` was found current at `generation` (0: not yet checked).
    @usableFromInline
    func recordTagCheck(_ slot: Int32, generation: UInt64) {
        if tagChecks == nil {
            let buffer = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
            buffer.initialize(repeating: 0, count: capacity)
            tagChecks = buffer
        }
        tagChecks?[Int(slot)] = generation
    }

    /// The expiry of `entry`, in seconds since the reference date; `.infinity` for never.
    @inlinable
    func expiry(of entry: Entry) -> Double {
        entry.canExpire ? expiries[Int(entry.slot)] : .infinity
    }
}
