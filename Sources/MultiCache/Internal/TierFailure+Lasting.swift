import CacheCore

extension CacheError.TierFailure {
    /// Whether the tier failed in a way no later attempt gets past until someone changes the configuration:
    /// another master key's data, a key or server it cannot use, a value it cannot encode, access refused.
    /// A write that failed so is not kept as pending (a replay would fail the same way on every run, and the
    /// journal would grow); an outage (`io`, `deadlineExceeded`, `unavailable`, `readOnly`, `outOfSpace`) or
    /// an error of another type is.
    var isLasting: Bool {
        switch (error as? CacheError)?.code {
        case .wrongMasterKey?, .invalidMasterKey?, .masterKeyNotFound?, .unsupportedServer?, .unsupportedFormat?,
            .invalidArgument?, .codec?, .permissionDenied?:
            true
        default:
            false
        }
    }
}
