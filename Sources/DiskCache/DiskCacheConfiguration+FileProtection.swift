extension DiskCacheConfiguration {
    /// The Data Protection class of a store's folders and of its key file, on the platforms that have
    /// per-file classes (iOS, tvOS, watchOS, visionOS); macOS and Linux ignore it.
    ///
    /// Files written into the store take the class of its folders. The default,
    /// ``completeUntilFirstUserAuthentication``, keeps the cache readable by background work while the device
    /// is locked, once it has been unlocked after a restart. Before that first unlock opening a store (or any
    /// operation) throws ``CacheError/Code/protectedDataUnavailable`` and changes nothing; the same
    /// call works once the device is unlocked. Changing the class of an existing store applies to entries
    /// written afterwards. See Apple's "Encrypting Your App's Files"
    /// (https://developer.apple.com/documentation/uikit/encrypting-your-app-s-files).
    ///
    /// A plain value; thread-safe.
    public enum FileProtection: Sendable, Hashable, CustomStringConvertible {
        /// Readable only while the device is unlocked (`FileProtectionType.complete`); a cache used by
        /// background work then fails with ``CacheError/Code/protectedDataUnavailable`` while locked.
        case complete
        /// Files open when the device locks stay readable; new files cannot be opened while locked
        /// (`FileProtectionType.completeUnlessOpen`).
        case completeUnlessOpen
        /// Readable from the first unlock after a restart on (`FileProtectionType
        /// .completeUntilFirstUserAuthentication`): the default.
        case completeUntilFirstUserAuthentication
        /// No protection beyond the volume's (`FileProtectionType.none`).
        case none

        /// The class's name, for messages.
        public var description: String {
            switch self {
            case .complete: return "complete"
            case .completeUnlessOpen: return "completeUnlessOpen"
            case .completeUntilFirstUserAuthentication: return "completeUntilFirstUserAuthentication"
            case .none: return "none"
            }
        }
    }
}
