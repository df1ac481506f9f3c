/// What ``DiskCache/verify(progress:)`` found.
///
/// A plain value; `Sendable` and thread-safe.
public struct DiskCacheVerifyReport: Sendable, Hashable {
    /// One file that failed verification and was removed.
    ///
    /// A plain value; `Sendable` and thread-safe.
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        /// The removed file's absolute path.
        public var path: String
        /// Why it failed, for example `authentication failed` or `truncated`.
        public var reason: String

        /// Creates an issue.
        ///
        /// - Parameters:
        ///   - path: The removed file.
        ///   - reason: Why it failed.
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        /// `path: reason`.
        public var description: String { "\(path): \(reason)" }

        /// The reason of an entry removed because its expiry passed.
        public static let expiredReason = "expired"
        /// The reason of an entry removed because one of its tags was removed since it was stored
        /// (Docs/Tags.md): it ended as planned, like an expired one.
        public static let tagRemovedReason = "a tag was removed"

        /// Whether the file was damaged (it failed to authenticate or parse, or belonged to an old key
        /// epoch), rather than removed because its life ended: expired, or ended by a tag removal.
        public var isDamage: Bool { reason != Self.expiredReason && reason != Self.tagRemovedReason }
    }

    /// How many entry files were checked (a count of files; files that vanished during the check and
    /// files that could not be read are not counted).
    public var checked: Int
    /// The paths of the files removed (corrupt, old key epoch, expired, or stale because a tag was removed).
    public var removed: [String]
    /// Each removed file with the reason.
    public var issues: [Issue]

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - checked: Files checked.
    ///   - removed: Paths of removed files.
    ///   - issues: Removed files with reasons; defaults to none.
    public init(checked: Int, removed: [String], issues: [Issue] = []) {
        self.checked = checked
        self.removed = removed
        self.issues = issues
    }
}
