#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error thrown by a Strata cache.
///
/// Switch over ``code`` to decide what to do; read ``message`` (and ``description``) for what
/// happened. New codes may be added in later releases without breaking existing `switch` statements,
/// because ``Code`` is a struct rather than an enum.
///
/// Thread safety: a value type; `Sendable`, so it may cross tasks and threads freely.
///
/// ```swift
/// do {
///     try await disk.setValue(data, forKey: key, expiry: .never)
/// } catch let error as CacheError where error.code == .outOfSpace {
///     try await disk.trim()
/// }
/// ```
public struct CacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// Compare with `==` or match in a `switch` with a `default` case. A plain value; thread-safe.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidArgument
            case wrongMasterKey
            case invalidMasterKey
            case corruptEntry
            case io
            case outOfSpace
            case permissionDenied
            case readOnly
            case codec
            case entryTooLarge
            case crypto
            case tierFailure
            case unsupportedFormat
            case protectedDataUnavailable
            case masterKeyNotFound
            case deadlineExceeded
            case unavailable
            case unsupportedServer
            case loadTimedOut
            case notLoaded
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// An argument was out of range (for example a negative limit or an empty tier list), or a key's
        /// canonical bytes could not be encoded.
        public static let invalidArgument = Code(.invalidArgument)
        /// The store was created with another master key; nothing was changed or deleted.
        public static let wrongMasterKey = Code(.wrongMasterKey)
        /// A master key or key file is malformed: wrong size, unreadable, or too widely readable.
        public static let invalidMasterKey = Code(.invalidMasterKey)
        /// A store's key-check record failed to parse or authenticate in a way that is not a wrong key;
        /// nothing was deleted.
        ///
        /// A damaged *entry* file is never thrown as this code: it is a miss, removed and reported to the
        /// observer as ``CacheEvent/Kind/corruptEntryRemoved``.
        public static let corruptEntry = Code(.corruptEntry)
        /// A file-system operation failed; ``CacheError/cause`` holds the underlying error.
        public static let io = Code(.io)
        /// The volume is full or the user's quota is used up (`ENOSPC`, `EDQUOT`). When an entry write
        /// fails this way, the earlier entry for the key is left as it was.
        public static let outOfSpace = Code(.outOfSpace)
        /// The process lacks permission for a file or folder (`EACCES`, `EPERM`).
        public static let permissionDenied = Code(.permissionDenied)
        /// The store sits on a read-only file system (`EROFS`).
        public static let readOnly = Code(.readOnly)
        /// A value could not be encoded or decoded by the cache's codec.
        public static let codec = Code(.codec)
        /// An entry exceeds a limit on its own and was not stored; no other entry was evicted.
        ///
        /// Every tier removes the earlier entry for the key first, so no reader sees a value older than the
        /// write: `MemoryCache` for an entry whose cost exceeds its cost limit (or its shard's share of it),
        /// `DiskCache` for an entry file over `byteLimit`, `RedisCache` for a value over its
        /// `maximumValueSize`. A `MultiCache` reports it as a ``tierFailure`` naming the tier.
        public static let entryTooLarge = Code(.entryTooLarge)
        /// The cryptographic back end (CryptoKit or OpenSSL `libcrypto`) reported a failure other than an
        /// authentication failure, for example the random generator failing.
        public static let crypto = Code(.crypto)
        /// One or more tiers of a composite cache failed; ``CacheError/tierFailures`` names them.
        public static let tierFailure = Code(.tierFailure)
        /// A store's key-check record uses a format version this build does not know. (An entry file with
        /// an unknown version is a corrupt entry: a miss, not this error.)
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The files or Keychain item are protected until the device is unlocked (iOS Data Protection):
        /// the device has not been unlocked since it restarted, or, for the `.complete` class, it is locked
        /// now. Nothing was changed and nothing is remembered: the same call works once the device is
        /// unlocked. Only thrown on iOS, tvOS, watchOS and visionOS.
        public static let protectedDataUnavailable = Code(.protectedDataUnavailable)

        /// A store already holds entries, but the master key it was created with is not where the
        /// configuration says (its key file is missing). No key was created: a new one could never open
        /// those entries. Nothing was changed or deleted; the message names the store, the key file and the
        /// ways out (restore the key, pass it, or discard the store with `DiskCacheConfiguration.removeStore()`).
        public static let masterKeyNotFound = Code(.masterKeyNotFound)

        /// A remote tier's server did not answer within the operation's deadline (`RedisCache`: read,
        /// write or connect deadline). Every request pending on that connection failed with it.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// A remote tier's server cannot be used now: the connection was refused or lost, the server is
        /// loading its data set, or the tier's circuit breaker is open after repeated failures (then the
        /// call failed at once, without a system call). Retrying later may succeed.
        public static let unavailable = Code(.unavailable)
        /// A remote tier's server is not one the tier can use: a sentinel, a replica or a read-only server
        /// (`RedisCache` needs a writable primary, or any node of a Redis Cluster). Not retried.
        public static let unsupportedServer = Code(.unsupportedServer)
        /// A load-once call gave up waiting for its loader at the hard timeout of its `LoadOptions`. The load
        /// itself goes on and its value is still stored when it arrives, unless a write or removal fenced it.
        public static let loadTimedOut = Code(.loadTimedOut)
        /// A batch loader (`values(forKeys:orLoad:)`) returned no value for a key that a single-key load-once
        /// caller had joined; the batch's own caller just finds the key absent from its result.
        public static let notLoaded = Code(.notLoaded)

        /// The code's name, for example `outOfSpace`.
        public var description: String { base.rawValue }
    }

    /// One failed tier of a composite cache.
    ///
    /// A plain value; `Sendable` and thread-safe.
    public struct TierFailure: Sendable, CustomStringConvertible {
        /// The tier's position, 0 for the fastest.
        public var index: Int
        /// The tier's name, as the composite was told or its type name.
        public var name: String
        /// What the tier threw.
        public var error: any Error

        /// Creates a tier failure record.
        ///
        /// - Parameters:
        ///   - index: The tier's position, 0 for the fastest.
        ///   - name: A readable name for the tier.
        ///   - error: What the tier threw.
        public init(index: Int, name: String, error: any Error) {
            self.index = index
            self.name = name
            self.error = error
        }

        /// `tier 1 (disk): …`.
        public var description: String { "tier \(index) (\(name)): \(error)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence a user can act on: what failed, where, and why.
    public var message: String
    /// The file or folder involved, when there is one (an absolute path).
    public var path: String?
    /// The error that caused this one, for example a POSIX error.
    public var cause: (any Error)?
    /// The tiers that failed, for ``Code/tierFailure``; empty otherwise.
    public var tierFailures: [TierFailure]
    /// The source file that threw, for diagnostics.
    public var file: String
    /// The source line that threw, for diagnostics.
    public var line: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What failed and why, in words a user can act on.
    ///   - path: The file or folder involved, if any.
    ///   - cause: The underlying error, if any.
    ///   - tierFailures: The failed tiers, for ``Code/tierFailure``.
    ///   - file: The throwing source file; defaults to the caller's.
    ///   - line: The throwing source line; defaults to the caller's.
    public init(
        _ code: Code,
        _ message: String,
        path: String? = nil,
        cause: (any Error)? = nil,
        tierFailures: [TierFailure] = [],
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
        self.tierFailures = tierFailures
        self.file = file
        self.line = line
    }

    /// `outOfSpace: cannot write entry (path: …; cause: …)`.
    public var description: String {
        var text = "\(code): \(message)"
        var details: [String] = []
        if let path { details.append("path: \(path)") }
        // A cause whose text the message already quotes is not repeated.
        if let cause, !message.contains("\(cause)") { details.append("cause: \(cause)") }
        if !tierFailures.isEmpty { details.append(tierFailures.map(\.description).joined(separator: "; ")) }
        if !details.isEmpty { text += " (" + details.joined(separator: "; ") + ")" }
        return text
    }
}

extension CacheError: LocalizedError {
    /// The same text as ``description``, so `localizedDescription` is readable too.
    public var errorDescription: String? { description }
}

extension CacheError {
    /// Maps a POSIX `errno` to the matching code: `ENOSPC`/`EDQUOT` to ``Code/outOfSpace``,
    /// `EACCES`/`EPERM` to ``Code/permissionDenied``, `EROFS` to ``Code/readOnly``, anything else to
    /// ``Code/io``. On iOS, tvOS, watchOS and visionOS `EPERM` is what Data Protection answers for a file
    /// whose class key is not available (before the first unlock), so there it maps to
    /// ``Code/protectedDataUnavailable``.
    ///
    /// - Parameters:
    ///   - errno: The POSIX error number.
    ///   - message: What was being done, for example `cannot write entry`.
    ///   - path: The file or folder involved.
    ///   - file: The throwing source file; defaults to the caller's.
    ///   - line: The throwing source line; defaults to the caller's.
    /// - Returns: An error whose cause is the matching `POSIXError` and whose message ends with the
    ///   system's text for `errno` (`strerror`).
    public static func posix(
        _ errno: Int32,
        _ message: String,
        path: String? = nil,
        file: String = #fileID,
        line: Int = #line
    ) -> CacheError {
        let code = Code(errno: errno, permissionErrorMeansProtectedData: permissionErrorMeansProtectedData)
        let cause: any Error =
            POSIXError.Code(rawValue: errno).map { POSIXError($0) as any Error } ?? UnknownPOSIXError(errno: errno)
        var text = "\(message): \(String(cString: strerror(errno)))"
        if code == .protectedDataUnavailable {
            text +=
                " (Data Protection: the device has not been unlocked since it restarted; try again after the "
                + "first unlock)"
        }
        return CacheError(code, text, path: path, cause: cause, file: file, line: line)
    }

    /// Whether `EPERM` on a file this process created means "protected until the device is unlocked": true
    /// on the platforms with per-file Data Protection classes (iOS, tvOS, watchOS, visionOS).
    package static var permissionErrorMeansProtectedData: Bool {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return true
        #else
        return false
        #endif
    }
}

extension CacheError.Code {
    /// The code for a POSIX `errno` (see ``CacheError/posix(_:_:path:file:line:)``), with the platform's
    /// reading of `EPERM` passed in so that both readings are tested on every platform.
    package init(errno: Int32, permissionErrorMeansProtectedData: Bool) {
        switch errno {
        case ENOSPC, EDQUOT: self = .outOfSpace
        case EPERM where permissionErrorMeansProtectedData: self = .protectedDataUnavailable
        case EACCES, EPERM: self = .permissionDenied
        case EROFS: self = .readOnly
        default: self = .io
        }
    }
}

/// The cause of a ``CacheError/posix(_:_:path:file:line:)`` error whose `errno` has no `POSIXError.Code` case
/// (an NSError in the POSIX domain before; NSError is Foundation proper, not FoundationEssentials).
struct UnknownPOSIXError: Error, CustomStringConvertible {
    var errno: Int32
    var description: String { "POSIX error \(errno)" }
}
