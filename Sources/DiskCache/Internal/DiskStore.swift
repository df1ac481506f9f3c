import CacheCore
import CacheCrypto

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

/// The engine behind every `DiskCache<Key, Value>`: files, keys, index and counters, working on
/// canonical key bytes and encoded value bytes (the generic wrapper adds the codec).
///
/// A coordinator over one type per job, each with its own state and lock: ``KeyGenerations`` (the epoch
/// and `store.check`), ``AtomicFileWriter`` (temporary files, renames, syncs), ``StoreAccounting`` (the
/// index, pending counters, scans, limits). The extensions wire them to the folders: the entry read and
/// write path (DiskStore+Entries.swift), trimming and statistics (DiskStore+Accounting.swift),
/// maintenance (DiskStore+Maintenance.swift, DiskStore+Wipe.swift, DiskStore+ForeignItems.swift).
///
/// Thread safety: the store's own state (folders, read-only cause, observer deferral) and each job's
/// state live behind separate locks, held only for in-memory updates, never during file I/O, never one
/// inside another, and never while calling the observer. Lock order: `store.lock` (a file lock), then
/// name stripes (DiskStore+NameLocks.swift), then any one of the in-memory locks. File-level exclusion
/// between processes (and between instances) uses `flock` on `store.lock` and on per-key lock files.
final class DiskStore: Sendable {
    struct State {
        /// Why the store was opened read-only (see DiskStore+Access.swift); `nil` when it is writable.
        var readOnlyCause: FileError?
        /// The store's folders, held open (StoreFolders.swift); `nil` until opened, or after the store
        /// folder went missing.
        var folders: StoreFolders?
    }

    /// The salt that derives the naming subkey; fixed so an entry keeps its file name across key epochs.
    static let namingSalt = Data("strata.disk.naming.v1".utf8)
    /// The granularity of recency on disk, in seconds: a hit rewrites a file's modification time only
    /// when it is at least this far from now, and a write keeps the kernel's time when the store's clock
    /// is this close to the real one. A burst of reads of one entry costs one metadata write, not one
    /// per read; LRU order between accesses less than this apart may follow the earlier access.
    static let recencyResolution: TimeInterval = 1

    let configuration: DiskCacheConfiguration
    let layout: StoreLayout
    /// Names entry and lock files: HMAC-SHA-256 under the naming subkey (stable across `removeAll()`).
    let namer: KeyedNamer
    let generations: KeyGenerations
    /// Names and seals the per-tag version counter files (TagCounters.swift).
    let tagCounters: TagCounters
    let writer: AtomicFileWriter
    let accounting = StoreAccounting()
    let state = Locked(State())
    /// Observer events, held back while this process holds `store.lock` or runs ``deferringEvents(_:)``.
    let events: HeldEvents
    /// Per-name stripes that keep a file change and its index update together (DiskStore+NameLocks.swift).
    // Int, not Void: ThreadSanitizer reports the inout access to a zero-sized state as a race.
    let nameLocks: [Locked<Int>] = (0..<nameLockStripeCount).map { _ in Locked(0) }

    var clock: any CacheClock { configuration.clock }
    var storeName: String { configuration.name }
    var master: MasterKey { generations.master }

    init(configuration: DiskCacheConfiguration) throws {
        self.configuration = configuration
        events = HeldEvents(observer: configuration.observer)
        layout = StoreLayout(root: configuration.resolvedDirectory)
        let layout = self.layout
        writer = AtomicFileWriter(
            layout: layout, isDurable: configuration.durability == .fsync, recencyResolution: Self.recencyResolution)
        let (master, createdKeyFile) = try Self.translatingErrors {
            try configuration.validate()
            let protection = configuration.fileProtection
            return try MasterKeyLoader.load(
                configuration.masterKeySource, storeName: configuration.name,
                protection: { try DataProtection.apply(protection, descriptor: $0, path: $1) },
                refusingCreation: { layout.missingKeyFileError(keyFilePath: $0) })
        }
        do {
            (namer, generations, tagCounters) = try Self.translatingErrors {
                let namingSubkey = try StoreSubkeys.namingSubkey(master: master, epochSalt: Self.namingSalt)
                return (
                    try KeyedNamer(namingSubkey: namingSubkey),
                    try KeyGenerations(master: master, layout: layout, storeName: configuration.name),
                    try TagCounters(master: master)
                )
            }
            try translatingErrors {
                try openFolders()
                adoptEpoch(try establishCheckRecord(preferredSalt: nil))
                if !isReadOnly { removeStaleTemporaryFiles() }
            }
        } catch {
            // A store that cannot be opened leaves no key file behind that this call created — unless some
            // other process created the store with that key in the meantime.
            if let createdKeyFile, !layout.holdsStore { unlink(createdKeyFile) }
            throw error
        }
    }

    deinit {
        try? flushStatistics()
    }

    // MARK: - Errors and events

    /// Runs `body`, turning internal failures into `CacheError`s.
    static func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CacheError {
            throw error
        } catch let error as FileError {
            throw error.cacheError
        } catch let error as CryptoFailure {
            throw CacheError(.crypto, "the cryptographic back end failed", cause: error)
        } catch {
            throw CacheError(.io, "unexpected failure: \(error)", cause: error)
        }
    }

    func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        try Self.translatingErrors(body)
    }

    /// Delivers an event to the observer, or, while this process holds `store.lock` or runs
    /// ``deferringEvents(_:)``, once the last such hold ends; call only outside `state.withLock`.
    func report(_ kind: CacheEvent.Kind, _ message: String, path: String? = nil, error: (any Error)? = nil) {
        guard configuration.observer != nil else { return }
        // Observers get the public error, never an internal type (a `FileError`) they cannot inspect.
        let error = (error as? FileError)?.cacheError ?? error
        events.deliver(CacheEvent(kind, "store '\(storeName)': \(message)", path: path, error: error))
    }

    /// Releases a hold of `store.lock` taken with ``storeLock(in:wait:creating:)``, then delivers the events
    /// reported while the last hold was taken.
    func release(_ lock: FileLock?) {
        guard let lock else { return }
        lock.unlock()
        events.endHold()
    }

    /// Runs `body` with observer events held back, then delivers them: for work done under a lock that an
    /// observer calling back into this store would need again (the load-once store gate), so an observer
    /// can never deadlock the store.
    func deferringEvents<T>(_ body: () throws -> T) rethrows -> T {
        try events.holding(body)
    }

    func count(_ update: (inout StatisticsCounters) -> Void) {
        accounting.count(update)
    }

    // MARK: - Files

    /// The entry (and lock) file name for a key: lower-case hex of HMAC-SHA-256(naming subkey, key bytes).
    func fileName(for keyBytes: Data) throws -> String {
        try namer.hexName(of: keyBytes)
    }
}
