import CacheCore

extension MultiCache {
    /// What a load noted before its loader ran, for its store: each tier's fences, and, when another process
    /// loaded the key meanwhile, the entry it stored.
    struct LoadNote: Sendable {
        /// Each tier's stamp; a tier without one gets no copy.
        var stamps: [Int: TierLoadStamp] = [:]
        /// The entry another process loaded and stored in the leasing tier (`LoadTurn.landed`): it is written
        /// into the other tiers as it is, and not into the leasing tier again.
        var landed: CacheEntry<Value>?
        /// Gives up this process's lease once the value is stored.
        var release: (@Sendable () -> Void)?
    }

    /// One load call's notes of each tier's fences, taken before its loader runs and read by its store.
    ///
    /// `nil` notes mean the call needs none — no tags, and no tier fences loads across processes — so a plain
    /// load pays no allocation or call for them, and its value is stored plainly in every tier.
    struct LoadStamping: Sendable {
        /// The cache, held weakly: a background refresh may outlive every caller.
        weak var cache: MultiCache?
        let tags: Set<String>
        let noted: Locked<[Key: LoadNote]>?

        init(cache: MultiCache, tags: Set<String>) {
            self.tags = tags
            // A plain load with no fencing tier takes neither the lock nor the weak reference (an atomic on
            // every copy of this value).
            guard !tags.isEmpty || cache.tiers.contains(where: \.handle.isLoadFencing) else {
                noted = nil
                return
            }
            self.cache = cache
            noted = Locked([:])
        }

        /// `load`, after this process's turn to load `key` in a tier that shares loads across processes, and
        /// noting the key's stamps. A value another process stored meanwhile is returned without loading.
        func load(
            _ key: Key, _ load: @escaping @Sendable () async throws -> Value
        ) -> @Sendable () async throws -> Value {
            guard let noted else { return load }
            return { [self] in
                guard let cache else { return try await load() }
                var note = LoadNote()
                if let (index, turn) = cache.leasingTier {
                    switch await turn(key) {
                    case .landed(let entry):
                        note.landed = entry
                        for other in cache.tiers.indices where other != index { note.stamps[other] = .plain }
                        noted.withLock { $0[key] = note }
                        return entry.value
                    case .load(let release):
                        note.release = release
                    }
                }
                note.stamps = await cache.loadStamps(forKeys: [key], tags: tags)[key] ?? [:]
                noted.withLock { $0[key] = note }
                do {
                    return try await load()
                } catch {
                    note.release?()
                    throw error
                }
            }
        }

        /// `loadBatch`, after noting the stamps of the keys it is given. A batch takes no lease: it loads in
        /// this process.
        func loadBatch(
            _ loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
        ) -> @Sendable ([Key]) async throws -> [Key: Value] {
            guard let noted else { return loadBatch }
            return { [self] keys in
                let stamps = await cache?.loadStamps(forKeys: keys, tags: tags) ?? [:]
                noted.withLock { notes in
                    for (key, stamps) in stamps { notes[key] = LoadNote(stamps: stamps) }
                }
                return try await loadBatch(keys)
            }
        }

        /// What `key`'s store works from: `nil` for a plain store in every tier; a note with no stamps when the
        /// key's were never noted (it is then stored nowhere).
        func note(for key: Key) -> LoadNote? {
            guard let noted else { return nil }
            return noted.withLock { $0[key] } ?? LoadNote()
        }
    }

    /// The first tier that shares loads across processes, with its index.
    var leasingTier: (Int, @Sendable (Key) async -> LoadTurn<Value>)? {
        for (index, tier) in tiers.enumerated() {
            if let turn = tier.handle.loadTurn { return (index, turn) }
        }
        return nil
    }

    /// Whether a process holds the lease on loading a key, in the first tier that shares loads across
    /// processes (the tier ``leasingTier`` names); `nil` without one.
    var leasingTierProbe: (@Sendable (Key) async -> Bool)? {
        tiers.lazy.compactMap(\.handle.isLoadLeased).first
    }

    /// Each tier's fences for each of `keys` before their load: a ticket from a tier that fences loads across
    /// processes (one per key, concurrently), the versions of `tags` from a tier that keeps them (read once),
    /// `.plain` from any other tier. A tier whose fences could not be read has no stamp: it gets no copy.
    func loadStamps(forKeys keys: [Key], tags: Set<String>) async -> [Key: [Int: TierLoadStamp]] {
        let tiers = self.tiers
        var shared: [Int: TierLoadStamp] = [:]
        var fencing: [Int] = []
        for (index, tier) in tiers.enumerated() {
            if tier.handle.isLoadFencing {
                fencing.append(index)
            } else if !tags.isEmpty, tier.handle.isTagVersioning {
                // A tier that cannot say its versions does not get the entry: stamped with today's versions
                // it could outlive a removal that lands during the load.
                if let versions = try? await tier.handle.tagVersions(tags) { shared[index] = .versions(versions) }
            } else {
                shared[index] = .plain
            }
        }
        var stamps = Dictionary(uniqueKeysWithValues: keys.map { ($0, shared) })
        guard !fencing.isEmpty else { return stamps }
        await withTaskGroup(of: (Key, Int, CacheLoadTicket?).self) { group in
            for key in keys {
                for index in fencing {
                    group.addTask { (key, index, try? await tiers[index].handle.loadTicket(key, tags)) }
                }
            }
            for await (key, index, ticket) in group {
                if let ticket { stamps[key]?[index] = .ticket(ticket) }
            }
        }
        return stamps
    }
}
