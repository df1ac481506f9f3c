import CacheCore

extension MultiCache {
    /// One load call's notes of each tier's fences, taken before its loader runs and read by its store.
    ///
    /// `nil` notes mean the call needs none — no tags, and no tier fences loads across processes — so a plain
    /// load pays no allocation or call for them, and its value is stored plainly in every tier.
    struct LoadStamping: Sendable {
        /// The cache, held weakly: a background refresh may outlive every caller.
        weak var cache: MultiCache?
        let tags: Set<String>
        let noted: Locked<[Key: [Int: TierLoadStamp]]>?

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

        /// `load`, after noting the stamps of `key`.
        func load(
            _ key: Key, _ load: @escaping @Sendable () async throws -> Value
        ) -> @Sendable () async throws -> Value {
            guard let noted else { return load }
            return { [self] in
                let stamps = await cache?.loadStamps(forKeys: [key], tags: tags)[key] ?? [:]
                noted.withLock { $0[key] = stamps }
                return try await load()
            }
        }

        /// `loadBatch`, after noting the stamps of the keys it is given.
        func loadBatch(
            _ loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
        ) -> @Sendable ([Key]) async throws -> [Key: Value] {
            guard let noted else { return loadBatch }
            return { [self] keys in
                let stamps = await cache?.loadStamps(forKeys: keys, tags: tags) ?? [:]
                noted.withLock { $0.merge(stamps) { _, new in new } }
                return try await loadBatch(keys)
            }
        }

        /// The stamps `key`'s store is checked against: `nil` for a plain store in every tier; empty when the
        /// key's stamps were never noted (it is then stored nowhere).
        func stamps(for key: Key) -> [Int: TierLoadStamp]? {
            guard let noted else { return nil }
            return noted.withLock { $0[key] } ?? [:]
        }
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
