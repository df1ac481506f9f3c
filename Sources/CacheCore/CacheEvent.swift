/// Something a cache noticed that the caller may want to log or count, but that did not fail the call.
///
/// Delivered to a ``CacheObserver`` outside any internal lock, on the thread that noticed it (for the
/// `async` methods of `DiskCache`, a thread of its I/O queue; for `MultiCache`, the task doing the read
/// or the load).
///
/// Thread safety: a plain value; `Sendable`.
public struct CacheEvent: Sendable, CustomStringConvertible {
    /// What happened.
    ///
    /// A struct rather than an enum, so new kinds can be added without breaking a caller's `switch`.
    /// A plain value; thread-safe.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A stored entry failed to authenticate or parse, was written under an earlier key epoch, or sat
        /// under another key's file name, and was removed (a miss).
        public static let corruptEntryRemoved = Kind("corruptEntryRemoved")
        /// A stored entry failed to authenticate or parse and was left in place (a miss): a shared tier
        /// (Redis) never deletes what it cannot open, since another holder of the namespace may have written it.
        public static let corruptEntryKept = Kind("corruptEntryKept")
        /// A file could not be read for a passing reason (permissions, I/O) and was left in place.
        public static let readFailed = Kind("readFailed")
        /// A tier of a composite cache threw on a read and was skipped.
        public static let tierReadFailed = Kind("tierReadFailed")
        /// A tier of a composite cache threw while a hit was written back into it.
        public static let writeBackFailed = Kind("writeBackFailed")
        /// A tier of a composite cache threw while entries another tier had invalidated (changed
        /// elsewhere) were removed from it; it may serve them until they expire or change again.
        public static let invalidationFailed = Kind("invalidationFailed")
        /// A write, removal or clear that an authoritative tier missed (it could not be reached) was kept
        /// as pending, to be replayed to it when it answers again.
        public static let writePending = Kind("writePending")
        /// A pending write was replayed to the authoritative tier, or dropped because that tier holds a
        /// newer write of the key.
        public static let pendingWriteReplayed = Kind("pendingWriteReplayed")
        /// Leftover temporary files from an interrupted write were removed.
        public static let staleFilesRemoved = Kind("staleFilesRemoved")
        /// Maintenance that is not part of the caller's request failed (for example the folder scan
        /// behind `DiskCache.statistics`); the cache keeps working.
        public static let maintenanceFailed = Kind("maintenanceFailed")

        /// The kind's name, for example `corruptEntryRemoved`.
        public var description: String { name }
    }

    /// What happened.
    public var kind: Kind
    /// A readable account of the event.
    public var message: String
    /// The file involved, when there is one.
    public var path: String?
    /// The tier involved in a composite cache, 0 for the fastest.
    public var tierIndex: Int?
    /// The error behind the event, when there is one.
    public var error: (any Error)?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - message: A readable account of it.
    ///   - path: The file involved, if any.
    ///   - tierIndex: The tier involved, if any.
    ///   - error: The error behind it, if any.
    public init(
        _ kind: Kind, _ message: String, path: String? = nil, tierIndex: Int? = nil, error: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.path = path
        self.tierIndex = tierIndex
        self.error = error
    }

    /// `corruptEntryRemoved: … (path: …)`.
    public var description: String {
        var text = "\(kind): \(message)"
        if let path { text += " (path: \(path))" }
        if let tierIndex { text += " (tier \(tierIndex))" }
        if let error { text += " — \(error)" }
        return text
    }
}

/// Receives ``CacheEvent``s. Must be safe to call from any thread; it is never called under a lock.
///
/// It runs synchronously on the thread that noticed the event, so the operation that noticed it waits
/// for it: keep it short (log or count, then return).
public typealias CacheObserver = @Sendable (CacheEvent) -> Void
