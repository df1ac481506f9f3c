import CacheCore

extension CacheError.TierFailure {
    /// Whether the tier refused the entry because it exceeds one of the tier's limits on its own
    /// (`entryTooLarge`). On a write-back or a load fill that is the tier's size rule at work, not a
    /// failure: a value too large for a small memory tier is refused on every read of its key.
    var isRefusedBySize: Bool {
        (error as? CacheError)?.code == .entryTooLarge
    }
}
