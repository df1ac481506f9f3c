import CacheCore

/// One tag's version counter in a memory tier: `removeAll(taggedWith:)` adds one, and every entry
/// stamped with an older version is a miss from then on.
@usableFromInline
final class TagCounter: Sendable {
    @usableFromInline let version = VersionCell(0)

    init() {}
}

/// A cache's tag generation: how many tag removals it has seen, plus one (so 0 means "never checked").
@usableFromInline
final class TagGeneration: Sendable {
    @usableFromInline let value = VersionCell(1)

    init() {}
}

/// The versions of a tagged entry's tags when it was stored, beside the counters they came from, so
/// that a hit checks them with one atomic load per tag and no hashing of tag names.
@usableFromInline
final class TagStamp: Sendable {
    @usableFromInline let counters: [TagCounter]
    @usableFromInline let versions: [UInt64]
    /// The tags, in the order of `counters`, for reads that return the entry's tags.
    @usableFromInline let tags: Set<String>

    init(counters: [TagCounter], versions: [UInt64], tags: Set<String>) {
        self.counters = counters
        self.versions = versions
        self.tags = tags
    }

    /// Whether every tag still has the version stamped: false once any of them was removed.
    @inlinable
    var isCurrent: Bool {
        for index in counters.indices where counters[index].version.load() != versions[index] {
            return false
        }
        return true
    }
}

/// A memory tier's tag version counters, one per tag ever used, created on first use.
///
/// Counters are never dropped: a tag removed and used again must keep counting up, or an entry stamped
/// before the removal would come back to life. The registry grows with the number of distinct tags used
/// (about 100 bytes a tag), not with the number of entries.
///
/// Thread safety: the dictionary sits behind one lock, held for one lookup or insertion; the counters are
/// `VersionCell`s (atomics on Linux).
final class TagRegistry: Sendable {
    private let counters = Locked<[String: TagCounter]>([:])
    /// Advanced after every tag's counter by ``advance(_:)``.
    let generation = TagGeneration()

    init() {}

    /// The counter of `tag`, created at version 0 if the tag was never used.
    func counter(for tag: String) -> TagCounter {
        counters.withLock { counters in
            if let counter = counters[tag] { return counter }
            let counter = TagCounter()
            counters[tag] = counter
            return counter
        }
    }

    /// Advances `tag`'s version: O(1) however many entries carry it.
    func advance(_ tag: String) {
        counter(for: tag).version.increment()
        generation.value.increment()
    }

    /// The current version of each of `tags`.
    func versions(of tags: Set<String>) -> CacheTagVersions {
        var versions: [String: UInt64] = [:]
        for tag in tags { versions[tag] = counter(for: tag).version.load() }
        return CacheTagVersions(versions)
    }

    /// A stamp of `tags` at `snapshot`'s versions (the current one for a tag the snapshot lacks), or `nil`
    /// for no tags.
    func stamp(_ tags: Set<String>, at snapshot: CacheTagVersions? = nil) -> TagStamp? {
        guard !tags.isEmpty else { return nil }
        var stampCounters: [TagCounter] = []
        var versions: [UInt64] = []
        stampCounters.reserveCapacity(tags.count)
        versions.reserveCapacity(tags.count)
        for tag in tags {
            let counter = counter(for: tag)
            stampCounters.append(counter)
            versions.append(snapshot?.versions[tag] ?? counter.version.load())
        }
        return TagStamp(counters: stampCounters, versions: versions, tags: tags)
    }
}
