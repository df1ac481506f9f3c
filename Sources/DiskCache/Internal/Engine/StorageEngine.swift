import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The storage under a ``DiskCache``: where sealed records live, how they are found by their key, replaced
/// atomically, listed, counted, trimmed and wiped. `DiskCache` and its extensions talk to their storage
/// only through this protocol, so a second engine (the SQLite one of issue 24: small sealed records in
/// rows, large ones in files) can take the place of today's file-per-entry engine (``FileEngine``) without
/// the cache above changing. Docs/DiskCache.md, "Engines", explains how each requirement maps onto both.
///
/// ## The contract
/// Every engine works on a key's canonical bytes and the codec's value bytes; the codec, the public types
/// and load-once live above it. An engine keeps these promises, checked for every engine (and the
/// in-memory fake of the tests) by `StorageEngineContractTests`:
/// - **Atomic replacement.** After ``write(keyBytes:valueBytes:expiresAt:cost:staleUntil:hasTags:)``
///   returns, a read of the key returns the new record or a newer one; no reader, in this or another
///   process, ever sees part of a record or a mix of two.
/// - **Only live records are returned.** A missing, expired (past its stale window), corrupt, old-epoch or
///   tag-stale record is `nil`: judged by the one liveness rule shared by every engine (the record
///   layout, its epoch and tag checks; Docs/DiskFormat.md), never by a copy of it.
/// - **Remove if unchanged.** What an engine removes on its own (an expired or corrupt record met by a
///   read or a sweep, a trim's victim) is removed only while it is still the record it judged: a record
///   written concurrently in its place stays.
/// - **Exact totals of what is held.** ``totals()`` counts the records held (expired ones not yet removed
///   included) and the bytes they take; a replacement replaces its size.
/// - **Limits after every write.** A write that takes the store over
///   ``DiskCacheConfiguration/byteLimit`` or ``DiskCacheConfiguration/countLimit`` trims least recently
///   used records to the low-water marks, sparing the one just written; a record larger than the byte
///   limit is refused with `.entryTooLarge` and removes the earlier record of its key.
/// - **Wipes end every earlier record at once** (a new key epoch first, then deletion).
/// - **Reads never block on writers** beyond one record's replacement, and report failures to the
///   configuration's observer, never while holding a lock a reentrant observer could need.
///
/// ## Errors
/// Requirements throw `CacheError` only: `.readOnly` for a change to a store opened read-only, the
/// file-system or database failure (`.io`, `.permissionDenied`, `.outOfSpace`, with the path) otherwise,
/// `.crypto` when the cryptographic back end fails.
///
/// ## Threads
/// Conformers are `Sendable` classes: every requirement may be called from any thread, concurrently with
/// any other, and does its I/O on the caller's thread (``DiskCache``'s `async` methods move it to their
/// I/O queue first).
protocol StorageEngine: AnyObject, Sendable {
    // MARK: - Records

    /// Reads the live record for `keyBytes`, or `nil`.
    ///
    /// A hit records recency (at the engine's granularity, without a write per read where the engine can
    /// avoid one). Expired, corrupt and old-epoch records met are removed if unchanged and counted.
    ///
    /// - Parameters:
    ///   - keyBytes: The key's canonical bytes.
    ///   - includingStale: Whether an expired record still inside its stale window is returned (and left
    ///     in place) rather than a miss.
    /// - Returns: The opened record: its header, key bytes, value bytes (without a tag block) and tags.
    /// - Throws: `CacheError` for a failure other than "not found" (the record is left in place).
    /// - Complexity: O(*m*) in the record's size, plus the engine's lookup.
    func read(keyBytes: Data, includingStale: Bool) throws -> EntryRecord?

    /// Seals and stores a record for `keyBytes` atomically, replacing any earlier one, then applies the
    /// limits.
    ///
    /// An `expiresAt` already past, or a limit of 0, stores nothing and removes the earlier record.
    ///
    /// - Parameters:
    ///   - keyBytes: The key's canonical bytes.
    ///   - valueBytes: The value's bytes; with `hasTags`, led by a tag block (TagBlock.swift).
    ///   - expiresAt: The absolute expiry (wall clock), or `nil` for none.
    ///   - cost: The caller's cost, kept in the record and returned on reads; not used by limits.
    ///   - staleUntil: Until when an expired record is kept for loads that may serve it stale, or `nil`.
    ///   - hasTags: Whether `valueBytes` start with a tag block.
    /// - Throws: `CacheError` `.readOnly`, `.entryTooLarge` (the earlier record removed, nothing evicted),
    ///   or the storage failure (the earlier record then left as it was). When the record was stored but
    ///   the trim after it failed, that error, with the new record in place.
    /// - Complexity: O(*m*) in the record's size; a write over a limit also trims.
    func write(
        keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date?, hasTags: Bool
    ) throws

    /// Removes the record for `keyBytes`, if any; an absent record is not an error.
    ///
    /// - Parameter keyBytes: The key's canonical bytes.
    /// - Throws: `CacheError` `.readOnly`, or the storage failure.
    func remove(keyBytes: Data) throws

    /// Starts a new key epoch, so every earlier record is unreadable at once, then deletes them.
    ///
    /// - Throws: `CacheError` `.readOnly`; the failure to start the epoch (nothing changed); or, when some
    ///   records could not be deleted, an error saying how many are left (they can no longer be read).
    /// - Complexity: O(*n*) deletions for *n* records.
    func removeAll() throws

    /// ``removeAll()``, reporting (records deleted, records found) as it deletes.
    ///
    /// An engine that deletes in one step may report nothing; the extension below does that.
    ///
    /// - Parameter progress: Called with (records done, records total), on the caller's thread.
    /// - Throws: What ``removeAll()`` throws.
    /// - Complexity: O(*n*) deletions for *n* records.
    func removeAll(progress: (_ done: Int, _ total: Int) -> Void) throws

    // MARK: - Listing and maintenance

    /// Opens and authenticates every record, removes the corrupt, expired and tag-stale ones (if
    /// unchanged), and calls `visit` with each live one.
    ///
    /// - Parameters:
    ///   - progress: Called with (records done, records total) before each record and once at the end.
    ///   - visit: Called with each live record and what the engine knows of it (its size and last access).
    /// - Returns: How many records were checked and which were removed, with reasons.
    /// - Throws: `CacheError` when the records cannot be listed or the key epoch cannot be read.
    /// - Complexity: O(*n*) full reads and decryptions for *n* records.
    func verify(
        progress: ((Int, Int) -> Void)?, visit: (EntryRecord, StoredEntryFacts) -> Void
    ) throws -> DiskCacheVerifyReport

    /// Removes expired, old-epoch and tag-stale records.
    ///
    /// - Returns: How many expired and tag-stale records were removed (old-epoch ones count as corrupt).
    /// - Throws: `CacheError` when the records cannot be listed or the key epoch cannot be read.
    /// - Complexity: O(*n*) for *n* records.
    func removeExpired() throws -> Int

    /// Removes least-recently-used records until at most `bytes` bytes and `count` records are held,
    /// counting records written by other processes.
    ///
    /// - Parameters:
    ///   - bytes: The byte target (records' sizes as ``totals()`` counts them), or `nil` for none.
    ///   - count: The record-count target, or `nil` for none.
    /// - Returns: The number of records removed.
    /// - Throws: `CacheError` `.readOnly`, or when the records cannot be listed or the store locked.
    /// - Complexity: O(*n* log *n*) for *n* records.
    func trim(toBytes bytes: Int?, toCount count: Int?) throws -> Int

    /// Brings the store within its configured limits (to the low-water marks) when it is over them; a
    /// store opened with smaller limits than it was filled under calls this at open.
    ///
    /// - Throws: What ``trim(toBytes:toCount:)`` throws.
    func applyLimits() throws

    /// The low-water mark for `limit`: where a trim after an overflow stops
    /// (``DiskCacheConfiguration/lowWaterFraction`` of it), the same rule for every engine.
    ///
    /// - Parameter limit: A byte or count limit.
    /// - Returns: The target, at most `limit`.
    func lowWater(_ limit: Int) -> Int

    // MARK: - Totals and statistics

    /// The records held and the bytes they take (expired ones not yet removed included).
    ///
    /// - Complexity: An engine may build its index on first use (O(*n*)); after that, O(1).
    func totals() -> (count: Int, bytes: Int)

    /// The store's counters across processes, with this instance's not yet flushed.
    func statistics() -> CacheStatistics

    /// Merges this instance's counters into the store's shared statistics.
    ///
    /// - Throws: `CacheError` when they cannot be written (the counts are kept for the next attempt).
    func flushStatistics() throws

    // MARK: - Tags

    /// The version to stamp each of `tags` with: its current one, a missing counter created at a fresh random
    /// base first (the counter rule, `FenceCounter`: a stamp is only ever taken from a counter that exists, and
    /// a read that finds a counter missing matches no stamp). Returns a version for every tag or throws.
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions, by tag.
    /// - Throws: `CacheError` `.corruptEntry` for a damaged counter (reported), or the storage failure.
    func tagVersions(of tags: Set<String>) throws -> [String: UInt64]

    /// Advances `tag`'s version, so every record stamped with an older one is a miss for every process.
    ///
    /// - Parameter tag: The tag to remove.
    /// - Throws: `CacheError` `.readOnly`, or the storage failure (the version then unchanged).
    func advanceTagVersion(of tag: String) throws

    // MARK: - Coordination

    /// Whether the store was opened read-only (every change then throws `.readOnly`).
    var isReadOnly: Bool { get }

    /// Runs `body` holding an exclusive lock for `keyBytes` shared by every process and instance on the
    /// store; it does not lock the record itself.
    ///
    /// - Parameters:
    ///   - keyBytes: The key's canonical bytes.
    ///   - wait: Whether to wait for the lock, or return `nil` at once when it is held elsewhere.
    ///   - body: Runs with the lock held, on the caller's thread.
    /// - Returns: `body`'s result, or `nil` when `wait` is `false` and the lock is taken.
    /// - Throws: `CacheError` `.readOnly`, a failure to take the lock, or what `body` throws.
    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R?

    /// Runs `body` with observer events held back, and delivers them after it returns: for work done
    /// under a lock an observer calling back into the cache would need.
    ///
    /// - Parameter body: The work.
    /// - Returns: `body`'s result.
    func deferringEvents<T>(_ body: () throws -> T) rethrows -> T

    /// Delivers an event about this store to the configuration's observer (later, while events are held
    /// back). Call it outside any lock of the engine.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - message: A sentence for a person; the engine prefixes the store's name.
    ///   - path: The file or folder concerned, if any.
    ///   - error: The failure, if any.
    func report(_ kind: CacheEvent.Kind, _ message: String, path: String?, error: (any Error)?)
}

extension StorageEngine {
    /// ``read(keyBytes:includingStale:)`` of a live record only (a stale one is a miss).
    func read(keyBytes: Data) throws -> EntryRecord? {
        try read(keyBytes: keyBytes, includingStale: false)
    }
}

/// What an engine knows of a stored record besides its contents, for listings.
struct StoredEntryFacts: Sendable, Equatable {
    /// The bytes the record takes in the store, as ``StorageEngine/totals()`` counts them.
    var size: Int
    /// The last access the engine recorded (at its granularity): the file's modification time for the file
    /// engine.
    var lastAccess: Date
}

extension StorageEngine {
    /// Removes every record without reporting progress: the default for an engine whose removal is one
    /// step (a table emptied in one statement has nothing to count).
    func removeAll(progress: (_ done: Int, _ total: Int) -> Void) throws {
        try removeAll()
    }
}
