import CacheCore

// The doubles wrap any `Cache`; only a wrapped `TagRemovingCache` can remove by tag.
extension FaultInjectingCache {
    /// The wrapped cache as a `TagRemovingCache`.
    ///
    /// - Throws: `CacheError` `.invalidArgument` when it is not one.
    func tagRemovingBase() throws -> any TagRemovingCache<Key, Value> {
        try Self.tagRemoving(base)
    }
}

extension RecordingCache {
    /// The wrapped cache as a `TagRemovingCache`.
    ///
    /// - Throws: `CacheError` `.invalidArgument` when it is not one.
    func tagRemovingBase() throws -> any TagRemovingCache<Key, Value> {
        try FaultInjectingCache<Key, Value>.tagRemoving(base)
    }
}

extension FaultInjectingCache {
    /// `cache` as a `TagRemovingCache`, or the error a double throws for a tag removal it cannot pass on.
    static func tagRemoving(_ cache: any Cache<Key, Value>) throws -> any TagRemovingCache<Key, Value> {
        guard let tagRemoving = cache as? any TagRemovingCache<Key, Value> else {
            throw CacheError(
                .invalidArgument, "the wrapped \(type(of: cache)) cannot remove entries by tag (not a TagRemovingCache)"
            )
        }
        return tagRemoving
    }
}
