import CacheCore
import CacheCrypto
import Foundation

/// The engine behind every `DiskCache<Key, Value>`: files, keys, index and counters, working on
/// canonical key bytes and encoded value bytes (the generic wrapper adds the codec).
///
/// Thread safety: mutable state lives in one `Locked<State>`, held only for in-memory updates, never
/// during file I/O and never while calling the observer. File-level exclusion between processes (and
/// between instances) uses `flock` on `store.lock` and on per-key lock files.
final class DiskStore: Sendable {
    struct State {
        /// The key epoch this process writes with, and the check record it was read from.
        var epoch: Epoch
        var checkStatus: FileStatus?
        /// Why the store was opened read-only (see DiskStore+Access.swift); `nil` when it is writable.
        var readOnlyCause: FileError?
        /// `nil` until an operation needs sizes or recency (see `ensureIndex()`).
        var index: StoreIndex?
        /// Counts not yet merged into `store.stats`.
        var pending = StatisticsCounters()
        /// How many `store.lock` holds this process has, and the observer events reported meanwhile: they
        /// are delivered once no hold is left, so no observer ever runs while the store lock is held (an
        /// iOS app suspended holding a file lock in a shared container is killed; Docs/Platforms.md).
        var storeLockHolds = 0
        var deferredEvents: [CacheEvent] = []
        /// Folder scans in flight, the index changes made since the first of them began, and a counter
        /// that invalidates them (see DiskStore+IndexState.swift).
        var activeScans = 0
        var journal: [IndexChange] = []
        var generation = 0
        /// Numbers this store's temporary files (see `StoreLayout.temporaryFile(sequence:)`).
        var temporarySequence: UInt64 = 0
        /// The store's folders, held open (StoreFolders.swift); `nil` until opened, or after the store
        /// folder went missing.
        var folders: StoreFolders?
    }

    /// Temporary files older than this (by the kernel's change time) are leftovers of a crashed writer.
    static let staleTemporaryFileAge: TimeInterval = 60
    /// The salt that derives the naming subkey; fixed so an entry keeps its file name across key epochs.
    static let namingSalt = Data("strata.disk.naming.v1".utf8)
    /// The granularity of recency on disk, in seconds: a hit rewrites a file's modification time only
    /// when it is at least this far from now, and a write keeps the kernel's time when the store's clock
    /// is this close to the real one. A burst of reads of one entry costs one metadata write, not one
    /// per read; LRU order between accesses less than this apart may follow the earlier access.
    static let recencyResolution: TimeInterval = 1

    let configuration: DiskCacheConfiguration
    let layout: StoreLayout
    let master: MasterKey
    /// Names entry and lock files: HMAC-SHA-256 under the naming subkey (stable across `removeAll()`).
    let namer: KeyedNamer
    let state: Locked<State>
    /// Per-name stripes that keep a file change and its index update together (DiskStore+NameLocks.swift).
    // Int, not Void: ThreadSanitizer reports the inout access to a zero-sized state as a race.
    let nameLocks: [Locked<Int>] = (0..<nameLockStripeCount).map { _ in Locked(0) }

    var clock: any CacheClock { configuration.clock }
    var storeName: String { configuration.name }

    init(configuration: DiskCacheConfiguration) throws {
        self.configuration = configuration
        layout = StoreLayout(root: configuration.resolvedDirectory)
        let layout = self.layout
        let (master, createdKeyFile) = try Self.translatingErrors {
            try configuration.validate()
            let protection = configuration.fileProtection
            return try MasterKeyLoader.load(
                configuration.masterKeySource, storeName: configuration.name,
                protection: { try DataProtection.apply(protection, descriptor: $0, path: $1) },
                refusingCreation: { layout.missingKeyFileError(keyFilePath: $0) })
        }
        do {
            let (namer, epoch) = try Self.translatingErrors {
                let namingSubkey = try StoreSubkeys.derive(master: master, epochSalt: Self.namingSalt).namingSubkey
                return (
                    try KeyedNamer(namingSubkey: namingSubkey), try Epoch.derive(master: master, salt: Data(count: 32))
                )
            }
            self.master = master
            self.namer = namer
            state = Locked(State(epoch: epoch, checkStatus: nil))
            try translatingErrors {
                try openFolders()
                let (current, currentStatus) = try establishCheckRecord(preferredSalt: nil)
                state.withLock {
                    $0.epoch = current
                    $0.checkStatus = currentStatus
                }
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

    /// Delivers an event to the observer, or, while this process holds `store.lock`, once it is released;
    /// call only outside `state.withLock`.
    func report(_ kind: CacheEvent.Kind, _ message: String, path: String? = nil, error: (any Error)? = nil) {
        guard let observer = configuration.observer else { return }
        // Observers get the public error, never an internal type (a `FileError`) they cannot inspect.
        let error = (error as? FileError)?.cacheError ?? error
        let event = CacheEvent(kind, "store '\(storeName)': \(message)", path: path, error: error)
        let deferred = state.withLock { state -> Bool in
            guard state.storeLockHolds > 0 else { return false }
            state.deferredEvents.append(event)
            return true
        }
        if !deferred { observer(event) }
    }

    /// Releases a hold of `store.lock` taken with ``storeLock(in:wait:creating:)``, then delivers the events
    /// reported while the last hold was taken.
    func release(_ lock: FileLock?) {
        guard let lock else { return }
        lock.unlock()
        let events = state.withLock { state -> [CacheEvent] in
            state.storeLockHolds -= 1
            guard state.storeLockHolds == 0 else { return [] }
            defer { state.deferredEvents = [] }
            return state.deferredEvents
        }
        for event in events { configuration.observer?(event) }
    }

    func count(_ update: (inout StatisticsCounters) -> Void) {
        state.withLock { update(&$0.pending) }
    }

    // MARK: - Folders and the key-check record

    /// Creates (or opens) the store folder, its folders and the store lock file, moving foreign items
    /// in their places aside (DiskStore+Folders.swift), holds the folders open, and gives the folders the
    /// configured Data Protection class (Apple platforms; DataProtection.swift), also when they are made again
    /// after a deletion from outside.
    func createFolders() throws {
        let folders = try reopenFolders(creating: true)
        let locks = try locksFolder(in: folders)
        // The store lock file exists whenever the store does, so a flush can tell a deleted store.
        // On a read-only volume this open fails with EROFS, which is what switches the store to read-only
        // mode (DiskStore+Access.swift); skipping it when the file exists would hide that.
        release(try storeLock(in: folders, wait: false, creating: true))
        // On the descriptors just opened without following links, not on the paths: a folder swapped for a
        // link since must not pass the class to whatever the link points at (DataProtection.swift).
        try DataProtection.apply(
            configuration.fileProtection, to: [folders.root, folders.entries, folders.temporary, locks])
    }

    /// Takes `store.lock`; a foreign item at its name is moved aside and a fresh lock file made when
    /// `creating`. Give a lock it returns back with ``release(_:)``, never `unlock()`, so that the events
    /// reported meanwhile reach the observer.
    func storeLock(in folders: StoreFolders, wait: Bool = true, creating: Bool = true) throws -> FileLock? {
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(StoreLayout.storeLockName, in: folders.root, wait: wait, creating: creating)
        } catch  where creating && (error.isForeignItem || error.detail != nil) {
            try moveAside(StoreLayout.storeLockName, in: folders.root, root: folders.root)
            lock = try FileLock.acquire(StoreLayout.storeLockName, in: folders.root, wait: wait, creating: true)
        } catch {
            throw error
        }
        if lock != nil { state.withLock { $0.storeLockHolds += 1 } }
        return lock
    }

    /// Reads and checks `store.check`; `nil` when it does not exist.
    ///
    /// The file is opened without following a link and without blocking, and must be a regular file of
    /// the record's exact size before a byte is read: a FIFO, a link or a huge sparse file there is a
    /// damaged record (a clear error; nothing is deleted), never a hang or a large allocation.
    func loadCheckRecord() throws -> (Epoch, FileStatus)? {
        let root: Directory
        do {
            root = try folders().root
        } catch  where FileError.isNotFound(error) {
            return nil
        }
        let path = layout.checkRecord
        let fd: Int32
        do {
            fd = try root.openFile(StoreLayout.checkRecordName, O_RDONLY)
        } catch  where error.isNotFound {
            return nil
        } catch  where error.isForeignItem {
            throw KeyCheckRecord.damaged("a symbolic link, not a regular file", path: path, storeName: storeName)
        } catch {
            throw error
        }
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: path)
        guard status.isRegularFile else {
            throw KeyCheckRecord.damaged("\(status.kind), not a regular file", path: path, storeName: storeName)
        }
        guard status.size == KeyCheckRecord.size else {
            throw KeyCheckRecord.damaged("wrong length \(status.size)", path: path, storeName: storeName)
        }
        let data = try FileSystem.readSmallFile(fd, count: KeyCheckRecord.size, path: path)
        let salt = try KeyCheckRecord.salt(from: data, master: master, path: path, storeName: storeName)
        return (try Epoch.derive(master: master, salt: salt), status)
    }

    /// Returns the store's epoch, creating the check record (with `preferredSalt`, or a fresh one) when
    /// there is none. Creation happens under `store.lock` and never replaces a record another process
    /// wrote first.
    func establishCheckRecord(preferredSalt: Data?) throws -> (Epoch, FileStatus) {
        if let loaded = try loadCheckRecord() { return loaded }
        let folders = try self.folders()
        let lock = try storeLock(in: folders)
        defer { release(lock) }
        if let loaded = try loadCheckRecord() { return loaded }
        let salt = try preferredSalt ?? CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize)
        let record = try KeyCheckRecord.make(salt: salt, master: master)
        try writeAtomically(
            record, in: folders.root, name: StoreLayout.checkRecordName, modified: nil, replacing: false)
        guard let loaded = try loadCheckRecord() else {
            throw CacheError(.io, "the key-check record vanished right after it was written", path: layout.checkRecord)
        }
        return loaded
    }

    /// The status of `store.check`, `nil` when it is missing. A missing record may mean that the store
    /// folder was deleted or replaced from outside, so the folders are opened again by path and asked
    /// once more.
    private func checkRecordStatus() throws -> FileStatus? {
        if let held = try? folders(), let status = try held.root.status(StoreLayout.checkRecordName) {
            return status
        }
        guard let reopened = try? reopenFolders(creating: false) else { return nil }
        return try reopened.root.status(StoreLayout.checkRecordName)
    }

    /// The epoch to read and write with, refreshed when another process changed `store.check` (one
    /// `fstatat` per call). When the record is missing and `recreating` is set, the folders and the record
    /// are recreated with this process's epoch, so a store deleted from outside keeps working.
    func currentEpoch(recreating: Bool) throws -> Epoch {
        let (cached, cachedStatus) = state.withLock { ($0.epoch, $0.checkStatus) }
        let onDisk = try checkRecordStatus()
        if let onDisk, onDisk == cachedStatus { return cached }
        let loaded: (Epoch, FileStatus)
        if onDisk != nil, let found = try loadCheckRecord() {
            loaded = found
        } else if recreating {
            try createFolders()
            loaded = try establishCheckRecord(preferredSalt: cached.salt)
        } else {
            return cached
        }
        state.withLock {
            if $0.epoch.id != loaded.0.id { $0.resetIndex(to: nil) }
            $0.epoch = loaded.0
            $0.checkStatus = loaded.1
        }
        return loaded.0
    }

    // MARK: - Files

    /// The entry (and lock) file name for a key: lower-case hex of HMAC-SHA-256(naming subkey, key bytes).
    func fileName(for keyBytes: Data) throws -> String {
        try namer.hexName(of: keyBytes)
    }

    /// Writes `data` to a fresh temporary file in `tmp/`, then renames it to `name` in `folder`
    /// (`replacing`) or links it there only if nothing has that name yet. With `.fsync` durability the
    /// file is synced before and its folder after. `modified` is set once the file is in place, so a
    /// temporary file's modification time is always the real time of its last write (see
    /// `removeStaleTemporaryFiles`).
    ///
    /// - Throws: `FileError`; a not-found error means the store folder is gone.
    func writeAtomically(_ data: Data, in folder: Directory, name: String, modified: Date?, replacing: Bool) throws {
        try writeAtomically(in: folder, name: name, modified: modified, replacing: replacing) { fd, path in
            try data.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: path) }
        }
    }

    /// ``writeAtomically(_:in:name:modified:replacing:)`` for a file whose bytes `fill` writes to the
    /// temporary file's descriptor (in one piece or streamed).
    /// `commit`, when given, runs right after the file is in place, under the name's stripe: the index
    /// update that must not be separated from the rename.
    func writeAtomically(
        in folder: Directory, name: String, modified: Date?, replacing: Bool,
        commit: (() -> Void)? = nil,
        fill: (_ fd: Int32, _ path: String) throws -> Void
    ) throws {
        let durable = configuration.durability == .fsync
        let temporaryFolder = try folders().temporary
        let (temporary, fd) = try createTemporaryFile(in: temporaryFolder)
        defer { FileSystem.closeFile(fd) }
        var placed = false
        defer { if !placed { try? temporaryFolder.unlink(temporary) } }
        try fill(fd, layout.temporaryFolder + "/" + temporary)
        if durable { try FileSystem.syncFile(fd, path: layout.temporaryFolder + "/" + temporary) }
        if let commit {
            try withNameLock(name) {
                try place(temporary, from: temporaryFolder, in: folder, name: name, replacing: replacing)
                commit()
            }
        } else {
            try place(temporary, from: temporaryFolder, in: folder, name: name, replacing: replacing)
        }
        placed = true
        // The kernel stamped the file with the real time of this write; it is reset only when the store's
        // clock is a recency step away from the real one (an injected or skewed clock), which saves a
        // system call per write in the usual case. Recency is advisory: a failure leaves the write time.
        if let modified, abs(modified.timeIntervalSinceNow) >= Self.recencyResolution {
            try? FileSystem.setTimes(fd, to: modified, path: name)
        }
        if durable { try folder.sync() }
    }

    /// Creates a fresh temporary file in `tmp/`, exclusively (`O_EXCL`, which also refuses a link).
    private func createTemporaryFile(in folder: Directory) throws -> (name: String, fd: Int32) {
        while true {
            let sequence = state.withLock { state in
                state.temporarySequence &+= 1
                return state.temporarySequence
            }
            let temporary = layout.temporaryFile(sequence: sequence)
            do {
                return (temporary, try folder.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL))
            } catch  where error.errno == EEXIST {
                // Left by an earlier process with the same pid and random bits; take the next number.
            } catch {
                throw error
            }
        }
    }

    private func place(
        _ temporary: String, from source: Directory, in folder: Directory, name: String, replacing: Bool
    )
        throws
    {
        if replacing {
            do {
                try source.rename(temporary, to: folder, as: name)
            } catch {
                // rename(2) replaces only a file: move a foreign directory in the way aside, then retry.
                guard !error.isNotFound, try quarantineIfDirectory(name, in: folder) else { throw error }
                try source.rename(temporary, to: folder, as: name)
            }
        } else {
            do {
                try source.link(temporary, to: folder, as: name)
            } catch  where error.errno == EEXIST {
                // Another process created it first; its record wins.
            } catch {
                throw error
            }
            try source.unlink(temporary)
        }
    }

    /// Removes `name` in `folder` only if it is still the file described by `status` (a concurrent
    /// writer may have renamed a good entry over it since it was read).
    @discardableResult
    func removeIfUnchanged(_ name: String, in folder: Directory, status: FileStatus) -> Bool {
        guard let current = try? folder.status(name), current.isSameFile(as: status) else { return false }
        return (try? folder.unlink(name)) != nil
    }

    /// Removes temporary files not written to for ``staleTemporaryFileAge`` by the real clock: a live
    /// writer finishes its temporary file in well under a minute, so only a crashed writer's files are
    /// that old. (Entry times follow the injected clock; temporary files are never re-stamped.)
    /// A younger file goes too when the process named by its `<pid>-` prefix no longer exists on this
    /// host, so a store reopened right after a crash holds no leftovers (Docs/Reliability.md, scenario 1).
    ///
    /// Only regular files whose names have the form of Strata's own temporary files are removed
    /// (`StoreLayout.isTemporaryName`); anything else in `tmp/` is left alone. `tmp/` is opened without
    /// following a link (a link there was moved aside when the folders were opened).
    func removeStaleTemporaryFiles() {
        guard let folder = try? folders().temporary else { return }
        let cutoff = Date().addingTimeInterval(-Self.staleTemporaryFileAge)
        var stale: [String] = []
        try? folder.forEach { name, status in
            guard status.isRegularFile, StoreLayout.isTemporaryName(name),
                status.modificationDate < cutoff || Self.writerIsGone(temporaryFileName: name)
            else { return }
            stale.append(name)
        }
        var removed = 0
        for name in stale where (try? folder.unlink(name)) != nil { removed += 1 }
        if removed > 0 {
            report(
                .staleFilesRemoved, "removed \(removed) temporary file(s) left by an interrupted write",
                path: layout.temporaryFolder)
        }
    }

    /// Whether the process that made a temporary file is known to have ended: its name starts with the
    /// writer's pid and `kill(pid, 0)` says no such process. Any doubt (another name, a pid that exists
    /// or belongs to someone else) keeps the file for the age rule. Another pid namespace sharing the
    /// folder could look gone; its write would then fail with an error, never leave a wrong entry.
    static func writerIsGone(temporaryFileName name: String) -> Bool {
        guard let dash = name.firstIndex(of: "-"), let pid = Int32(name[..<dash]), pid > 0, pid != getpid() else {
            return false
        }
        return kill(pid, 0) == -1 && errno == ESRCH
    }
}
