import CacheCore

/// What one tier's store of a loaded value is checked against, noted before the loader ran.
///
/// A tier with no stamp in a load's stamps gets no copy of its value: its fences could not be read, and a copy
/// stored without them could outlive a removal that lands while the loader runs.
enum TierLoadStamp: Sendable {
    /// Nothing to check: the load has no tags and the tier fences nothing across processes.
    case plain
    /// The versions of the load's tags in the tier (`TagVersioningCache`): the stored copy is stamped with
    /// them, so a tag removal since leaves it already a miss.
    case versions(CacheTagVersions)
    /// The tier's load ticket (`LoadFencingCache`): the tier stores the copy only if no removal of the key
    /// happened anywhere since.
    case ticket(CacheLoadTicket)
}
