import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An encrypted-at-rest disk tier: one AES-256-GCM file per entry, in a store folder under the
/// platform caches directory (or any folder you give).
///
/// ```swift
/// let cache = try DiskCache<String, Data>(
///     configuration: DiskCacheConfiguration(name: "images", byteLimit: 500 << 20))
/// try cache.setValue(png, forKey: url.absoluteString, expiry: .seconds(86_400))
/// let hit = try cache.value(forKey: url.absoluteString)
/// ```
///
/// ## Files
/// Each entry is written to a temporary file and renamed into place, so readers — in this or another
/// process — see the old entry or the new one, never a partial file. File names are an HMAC of the
/// key's canonical bytes (see ``CacheKey``); nothing on disk reveals a key or a value.
/// Docs/DiskFormat.md specifies the layout, Docs/DiskCache.md the behaviour.
///
/// ## Cryptography
/// Built on the platform's primitives (CryptoKit on Apple platforms, OpenSSL `libcrypto` on Linux),
/// never hand-written ones:
/// - Entries are sealed with AES-256-GCM (NIST SP 800-38D) under a fresh random 96-bit nonce per write;
///   the 52-byte header and the file name are the associated data.
/// - File names are HMAC-SHA-256 (RFC 2104 over SHA-256 from FIPS 180-4) of the key's canonical bytes.
/// - The encryption, naming and key-check subkeys come from the master key through HKDF-SHA-256
///   (RFC 5869).
///
/// ## Keys and epochs
/// The master key comes from ``DiskCacheConfiguration/masterKeySource``. A key-check record in the store
/// tells a wrong master key (``CacheError/Code/wrongMasterKey``, nothing deleted) apart from a
/// damaged entry (a miss: removed, counted, reported to the observer). `removeAll()`, synchronous or
/// `async`, starts a new key epoch first, so an interrupted wipe leaves nothing decryptable.
///
/// ## Limits and recency
/// ``DiskCacheConfiguration/byteLimit`` counts the entry files' real sizes. Recency is the file's
/// modification time, kept by the cache to the second on writes and hits, so LRU order survives
/// restarts.
/// After each write the store is within its limits (trimmed to the low-water mark).
///
/// ## Time
/// Expiry instants and recency are wall-clock times from ``DiskCacheConfiguration/clock``, because they
/// must survive restarts. A clock jump forward expires entries early. A jump backward never revives an
/// entry that was already removed, but an expired entry not yet removed is live again until the clock
/// passes its expiry once more; entries touched after a backward jump look older than they are to LRU.
///
/// ## Threads
/// `Sendable`: every method may be called from any thread or task. The synchronous methods do file
/// I/O on the caller's thread; the `async` ones run it on a dedicated dispatch queue, never on the
/// cooperative thread pool. State shared between threads sits behind one internal lock that is never held
/// during file I/O or while the observer runs; processes sharing the folder coordinate with `flock`.
public final class DiskCache<Key: CacheKey, Value: Sendable>: Cache, Sendable {
    /// The clock that decides expiry and stamps recency: ``DiskCacheConfiguration/clock``.
    public var clock: any CacheClock { configuration.clock }
    /// The configuration the store was opened with.
    public let configuration: DiskCacheConfiguration
    /// The store's folder: ``DiskCacheConfiguration/resolvedDirectory``.
    public var directory: URL { configuration.resolvedDirectory }
    let codec: ValueCodec<Value>
    /// Where the records live: the engine the store records, SQLite or files (Internal/Engine/). An
    /// existential, not a generic parameter, so the public type stays `DiskCache<Key, Value>`; its
    /// dynamic dispatch costs nanoseconds beside a read's file I/O (Docs/DiskCache.md, "Engines").
    let engine: any StorageEngine
    /// Load-once for the load calls (DiskCache+LoadHosting.swift), created by the first load.
    let loadOnce = TierLoadOnce<Key, Value>()

    /// Opens (creating if needed) the store described by `configuration`, with `codec` for values.
    ///
    /// Opening a store without limits does not look at the entry files (cost independent of their
    /// number): it loads or creates the master key, creates the folders, reads (or, for a new store,
    /// writes under the store's `flock`) the key-check record, and removes temporary files left by a
    /// crashed writer (older than a minute). The size and recency index is built on first need. A store
    /// opened with a `byteLimit` or `countLimit` builds the index at once and, when it holds more than
    /// its limits allow (a limit made smaller since the last open), trims to the low-water marks before
    /// this returns, as a write would.
    ///
    /// When the folders or the store's lock file cannot be created or opened for writing because the
    /// file system is read-only or the process may not modify the folder (`EROFS`, `EACCES`, `EPERM`),
    /// an existing store opens **read-only**: reads, hits, `listEntries()`, `statistics` and `verify()`
    /// work (nothing is removed or re-stamped), every change throws `.readOnly`, and counters are not
    /// flushed.
    ///
    /// - Parameters:
    ///   - configuration: Where the store lives, its limits, master-key source and clock.
    ///   - codec: Turns values into bytes and back.
    /// - Throws: `CacheError` `.wrongMasterKey` when the store was created under another master key (nothing is
    ///   deleted), `.corruptEntry` when its key-check record is damaged — including a symbolic link, a
    ///   FIFO, a folder or a file of the wrong size in its place (nothing is deleted),
    ///   `.unsupportedFormat` for a newer store format, `.invalidMasterKey` for a malformed key or key file,
    ///   `.invalidArgument` for a negative limit, a low-water fraction outside (0, 1] or a bad name,
    ///   `.io`/`.permissionDenied`/`.readOnly`/`.outOfSpace` when the folder, the key file or the
    ///   key-check record cannot be created or read (a store without a key-check record cannot be opened
    ///   read-only: there is nothing to read), `.crypto` when the random generator or the back end
    ///   fails.
    /// - Complexity: File I/O on the caller's thread: a few small files, plus one listing of the
    ///   temporary folder (O(*t*) in the temporary files there); without limits, independent of the number
    ///   of entries. With a limit, plus one `lstat` per entry file (O(*n*)), and a trim when over it.
    public convenience init(configuration: DiskCacheConfiguration, codec: ValueCodec<Value>) throws {
        self.init(configuration: configuration, codec: codec, engine: try EngineSelection.openEngine(configuration))
    }

    /// Opens a cache over `engine`, already opened for `configuration`, then applies the limits as
    /// ``init(configuration:codec:)`` does: how the contract tests run a cache over the in-memory fake.
    init(configuration: DiskCacheConfiguration, codec: ValueCodec<Value>, engine: any StorageEngine) {
        self.configuration = configuration
        self.codec = codec
        self.engine = engine
        applyLimitsAtOpen()
    }

    /// Brings a store reopened with smaller limits within them now, rather than at its next write, so a
    /// reader never sees entries the configuration no longer allows. Only a store with a limit pays the
    /// folder scan here (which its first write would otherwise pay); a failed trim is reported to the
    /// observer as ``CacheEvent/Kind/maintenanceFailed`` and retried by the next write, because a cache
    /// that can still be read should still open.
    private func applyLimitsAtOpen() {
        guard configuration.byteLimit != nil || configuration.countLimit != nil, !engine.isReadOnly else { return }
        do {
            try engine.applyLimits()
        } catch {
            engine.report(
                .maintenanceFailed, "cannot bring the store within its limits at open", path: nil, error: error)
        }
    }

    // MARK: - Synchronous API (file I/O on the caller's thread)

    /// Reads the live entry for `key`; a missing, expired or corrupt entry is `nil`, and so is a tagged
    /// entry one of whose tags was removed since it was stored, or whose tag counter cannot be read or is
    /// damaged (reported to the observer; never served).
    ///
    /// A hit records recency in the file's modification time (at most once a second). An expired,
    /// corrupt, old-epoch or misplaced file is removed and counted; corrupt ones are reported to the
    /// observer.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its absolute expiry and the cost it was stored with, or `nil`.
    /// - Throws: `CacheError` `.codec` when the value does not decode (the file is kept),
    ///   `.invalidArgument` when the key cannot be encoded, or the I/O error (`.permissionDenied`,
    ///   `.io`) when the file exists but cannot be read — reported as `readFailed`, file kept; `.io` too
    ///   when something other than a regular file (a symbolic link, a FIFO, a folder) sits at the entry's
    ///   name — it is never followed or waited on (Docs/Security.md, "A hostile store folder");
    ///   `.crypto` when the back end fails for a reason other than authentication; `.wrongMasterKey`,
    ///   `.corruptEntry` or `.unsupportedFormat` when another process replaced the key-check record
    ///   with one this key cannot open.
    /// - Complexity: File I/O on the caller's thread: one `stat` of the key-check record, one open of
    ///   the fan-out folder, one open and full read of the entry file (its header first when it is over
    ///   1 MiB), an AES-GCM decryption in place and a time stamp; O(*m*) in the entry's size, with the
    ///   value held once in memory.
    ///
    /// Thread-safe.
    public func entry(forKey key: Key) throws -> CacheEntry<Value>? {
        guard let record = try engine.read(keyBytes: try canonicalBytes(of: key)) else { return nil }
        return CacheEntry(
            value: try decode(record.valueBytes), expiresAt: record.header.expiresAt, cost: record.header.cost,
            staleUntil: record.header.staleUntil, tags: record.tags)
    }

    /// Reads the live value for `key`.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` on a miss.
    /// - Throws: What `entry(forKey:)` throws.
    /// - Complexity: That of `entry(forKey:)`: file I/O, O(*m*) in the entry's size.
    public func value(forKey key: Key) throws -> Value? { try entry(forKey: key)?.value }

    /// Stores `entry` under `key` atomically, then trims to the limits if needed.
    ///
    /// An entry already expired is not stored and removes the earlier one. With a limit of 0 nothing is
    /// stored (and the earlier entry is removed).
    /// A directory the store did not create, found where the entry file belongs, is moved whole into the
    /// store's `quarantine/` folder (reported to the observer as `corruptEntryRemoved`) and the entry is
    /// stored.
    ///
    /// - Parameters:
    ///   - entry: The value, its absolute expiry and an optional cost (kept in the record and returned
    ///     on reads; limits always use the file size).
    ///   - key: The key to store it under.
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only (nothing is written),
    ///   `.codec` when the value does not encode, `.outOfSpace`/`.io`/... for
    ///   file-system failures (in these cases the earlier entry is left as it was); `.entryTooLarge` when
    ///   its file alone exceeds `byteLimit`: then no other entry is evicted, and the earlier entry for `key`
    ///   is removed (as `MemoryCache` does), so a read never returns a value older than the last write.
    ///   `.invalidArgument` when the key cannot be encoded, or for a tag over 65,535 bytes of UTF-8 or more
    ///   than 65,535 tags (Docs/Tags.md, "The tag rule"; nothing is read or written and the earlier entry
    ///   stays); `.crypto` when the back end fails. When the entry was stored but the trim that follows fails (for example the store's lock file cannot be
    ///   opened), the call throws that error although the new entry is in place.
    /// - Complexity: File I/O on the caller's thread: encryption and one write of O(*m*) bytes for an
    ///   entry of *m* bytes, then a rename (and, with `.fsync` durability, two flushes). With a limit
    ///   set, the first write in a process scans the folder (one `lstat` per file), and a write that takes
    ///   the store over a limit trims it: O(*n* log *n*) for *n* entries, under the store's `flock`.
    ///
    /// A tagged entry is stamped with its tags' current versions (one small file read per tag, Docs/Tags.md);
    /// a damaged tag counter throws `.corruptEntry` and removes the earlier entry for `key`.
    ///
    /// Thread-safe; concurrent writes of one key leave one of them whole.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) throws {
        try write(entry, forKey: key, taggedAt: nil)
    }

    /// Stores `value` under `key` with `expiry` (the store's default expiry when `nil`).
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When it expires, resolved against ``clock`` now; `nil` for
    ///     ``DiskCacheConfiguration/defaultExpiry``.
    /// - Throws: What `setEntry(_:forKey:)` throws.
    /// - Complexity: That of `setEntry(_:forKey:)`. The entry is stored without a cost (`cost` reads
    ///   back as `nil`).
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        let expiresAt = (expiry ?? configuration.defaultExpiry).expirationDate(from: clock.now)
        try setEntry(CacheEntry(value: value, expiresAt: expiresAt), forKey: key)
    }

    /// Removes the entry for `key`, if any.
    ///
    /// - Parameter key: The key to remove.
    /// A directory the store did not create, found where the entry file belongs, is moved whole into the
    /// store's `quarantine/` folder and reported to the observer as `corruptEntryRemoved`.
    ///
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only, `.invalidArgument` when the
    ///   key cannot be encoded, `.crypto` when the file name cannot be computed, or the file-system error
    ///   (`.permissionDenied`, `.readOnly`, `.io`) when the file exists but cannot be removed or moved
    ///   aside. An absent file is not an error.
    /// - Complexity: One `unlink` on the caller's thread.
    ///
    /// Thread-safe.
    public func removeEntry(forKey key: Key) throws {
        let keyBytes = try canonicalBytes(of: key)
        try loadOnce.fenced(key) { try engine.remove(keyBytes: keyBytes) }
    }

    /// Removes every entry: starts a new key epoch (under the store's `flock`), then deletes every
    /// entry file. Files that survive an interrupted wipe can no longer be decrypted and are removed
    /// by later reads and sweeps.
    ///
    /// A directory the store did not create, found where an entry file belongs, is moved whole into the
    /// store's `quarantine/` folder (reported to the observer as `corruptEntryRemoved`), never deleted.
    /// On a full disk, where the new key-check record cannot be written first, the entry files are
    /// deleted first and the record written after (Docs/DiskCache.md explains the order).
    ///
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only; when the key-check record
    ///   cannot be rewritten (`.io`, `.permissionDenied`, `.readOnly`, `.outOfSpace`) nothing was changed;
    ///   `.crypto` when the random generator fails. When some items cannot be removed (an entry folder
    ///   cannot be listed, a file cannot be deleted, a foreign directory cannot be moved), every other
    ///   file is still deleted and the error says how many are left, the first one's path and reason,
    ///   and that the new epoch is in place, so what is left can no longer be read.
    /// - Complexity: O(*n*) file deletions on the caller's thread, after waiting for the store's `flock`.
    ///
    /// Thread-safe; other processes see the new epoch on their next operation.
    public func removeAll() throws {
        try loadOnce.fenced(nil) { try engine.removeAll() }
    }

    /// Removes every entry, as `removeAll()` does, and reports how far the deletion has come.
    ///
    /// The new key epoch is in place before the first report, so every entry is already unreadable; what
    /// is reported is the deletion of the files that held them, which is the part that takes time on a
    /// large store (the `strata clear` progress line uses it).
    ///
    /// - Parameter progress: Called on the caller's thread with (entry files deleted, entry files found):
    ///   once with (0, *n*) when the entry folders have been listed, then after each file. Files that could
    ///   not be deleted count as done. Not called when the store is empty of folders.
    /// - Throws: What `removeAll()` throws, in the same cases.
    /// - Complexity: O(*n*) file deletions on the caller's thread, after waiting for the store's `flock`; the
    ///   *n* file names are held in memory while they are deleted, as ``verify(progress:)`` holds them.
    ///
    /// Thread-safe; `progress` runs while the store's lock is held, so it must not call into this store.
    public func removeAll(progress: (_ done: Int, _ total: Int) -> Void) throws {
        try loadOnce.fenced(nil) { try engine.removeAll(progress: progress) }
    }

    /// Runs `body` while holding an advisory exclusive lock (`flock`) for `key`, shared by every
    /// process and every instance on this store; waits for the lock.
    ///
    /// The lock file is `locks/<hmac>.lock` (never deleted, so the lock cannot be split by a race).
    /// It does not lock the entry itself: reads and writes of `key` proceed as usual. The `strata exec`
    /// command uses it to run a command once across processes.
    ///
    /// - Parameters:
    ///   - key: The key whose lock to take.
    ///   - body: Runs with the lock held, on the caller's thread.
    /// - Returns: `body`'s result.
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only (the lock file cannot be
    ///   created; `body` does not run), another `CacheError` when the lock file cannot be opened or locked,
    ///   `.invalidArgument` when the key cannot be encoded, or what `body` throws.
    /// - Complexity: One open and one `flock` of a small file, then `body`. It blocks the calling thread
    ///   until the lock is free, so do not call it from a task on the cooperative pool when the wait can
    ///   be long.
    ///
    /// Thread-safe: each call opens the lock file anew, so two calls in one process exclude each other
    /// as two processes do. Not reentrant: calling it again for the same key inside `body` deadlocks.
    public func withLock<R>(forKey key: Key, _ body: () throws -> R) throws -> R {
        let keyBytes = try canonicalBytes(of: key)
        guard let result = try engine.withKeyLock(keyBytes: keyBytes, wait: true, { try body() }) else {
            throw CacheError(.io, "the per-key lock was not taken", path: directory.path)
        }
        return result
    }

    /// Runs `body` holding the lock for `key` if no other holder has it; does not wait.
    ///
    /// - Parameters:
    ///   - key: The key whose lock to take.
    ///   - body: Runs with the lock held, on the caller's thread.
    /// - Returns: `body`'s result, or `nil` when another process or instance holds the lock.
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only, another `CacheError` when
    ///   the lock file cannot be opened, `.invalidArgument` when the key cannot be encoded, or what `body`
    ///   throws.
    /// - Complexity: One open and one non-blocking `flock` of a small file, then `body`.
    ///
    /// Thread-safe, like ``withLock(forKey:_:)``.
    public func withLockIfAvailable<R>(forKey key: Key, _ body: () throws -> R) throws -> R? {
        try engine.withKeyLock(keyBytes: try canonicalBytes(of: key), wait: false, body)
    }

    // MARK: - Helpers

    func canonicalBytes(of key: Key) throws -> Data {
        do {
            return try key.canonicalBytes
        } catch {
            throw CacheError(.invalidArgument, "cannot encode the key's canonical bytes", cause: error)
        }
    }

    /// The bytes of `value`, by the store's codec.
    func encode(_ value: Value) throws -> Data {
        do {
            return try codec.encode(value)
        } catch {
            throw CacheError(.codec, "cannot encode the value for store '\(configuration.name)'", cause: error)
        }
    }

    func decode(_ bytes: Data) throws -> Value {
        do {
            return try codec.decode(bytes)
        } catch {
            throw CacheError(
                .codec, "cannot decode a stored value in store '\(configuration.name)'; the entry was kept",
                cause: error)
        }
    }
}

extension DiskCache where Value == Data {
    /// Opens a store of `Data` values, stored unchanged.
    ///
    /// - Parameter configuration: Where the store lives, its limits, master-key source and clock.
    /// - Throws: What ``init(configuration:codec:)`` throws.
    /// - Complexity: That of ``init(configuration:codec:)``: a few small files.
    public convenience init(configuration: DiskCacheConfiguration) throws {
        try self.init(configuration: configuration, codec: .data)
    }
}

extension DiskCache where Value: Codable {
    /// Opens a store of `Codable` values, encoded as JSON.
    ///
    /// - Parameter configuration: Where the store lives, its limits, master-key source and clock.
    /// - Throws: What ``init(configuration:codec:)`` throws.
    /// - Complexity: That of ``init(configuration:codec:)``: a few small files.
    public convenience init(configuration: DiskCacheConfiguration) throws {
        try self.init(configuration: configuration, codec: .json())
    }
}
