import CacheCore
import RedisConnection

/// The Redis tier's side of invalidation: its observers, its tracking listener, the names it can map
/// back to keys, and the translation of tracking messages into ``CacheInvalidation``s.
///
/// - The listener runs while at least one observer is registered: started by the first, stopped when
///   the last is cancelled or the hub is released.
/// - A push names Redis keys. A name under `…:k:` that this process used recently maps to its key and
///   is published as `.keys`; an unknown one names no key this process holds above, unless names were
///   dropped from the bounded map (``TrackedNames``), and is then published as `.all`. The epoch key
///   (`removeAll()` anywhere) and a `null` payload (`FLUSHDB`, `FLUSHALL`) are published as `.all`;
///   other names of the namespace (the key-check record) name no entry and are ignored. A tag's version
///   key (`…:t:`, advanced by `removeAll(taggedWith:)` in another process) that maps back to a tag this
///   process used is published as `.tags`.
/// - A lost connection publishes `.all` at once; once tracking is back on, `.all` again, and only then
///   does ``isTracking`` turn true.
///
/// Thread safety: the state sits behind one lock, never held while an observer runs; observers are
/// called on the listener's thread only, so never concurrently with each other.
final class InvalidationHub<Key: Hashable & Sendable>: Sendable {
    typealias Observer = @Sendable (CacheInvalidation<Key>) -> Void

    struct State {
        var observers: [UInt64: Observer] = [:]
        var nextObserverID: UInt64 = 0
        var listener: TrackingListener?
        /// Listeners stopped when their last observer left, until ``close()`` waits for them.
        var retired: [TrackingListener] = []
        /// Advanced for each listener started; events of an older (stopped) listener are ignored.
        var generation: UInt64 = 0
        var names: TrackedNames<Key>
        /// The tags whose version keys this process read or advanced, by name (bounded like `names`).
        var tagNames: TrackedNames<String>
        var isTracking = false
        /// Set by ``close()``: no listener starts again.
        var isClosed = false
        var counters = Counters()
    }

    /// What ``RedisCacheHealth`` reports of tracking.
    struct Counters: Sendable {
        var trackingConnects = 0
        var trackingLosses = 0
        var keysInvalidated = 0
        var fullInvalidations = 0
    }

    private let settings: TrackingListener.Settings
    private let epochKey: [UInt8]
    private let entryPrefix: [UInt8]
    private let tagPrefix: [UInt8]
    private let state: Locked<State>
    /// Whether `state.observers` is non-empty, written only while `state`'s lock is held (so it always
    /// equals that at the lock's release). ``track(_:for:)`` runs on every operation and reads only this
    /// non-generic flag when nobody observes: locking the generic `State` looked its metadata up at run time.
    private let isObserved = Locked(false)

    init(
        settings: TrackingListener.Settings, epochKey: [UInt8], entryPrefix: [UInt8], tagPrefix: [UInt8],
        trackedKeyLimit: Int
    ) {
        self.settings = settings
        self.epochKey = epochKey
        self.entryPrefix = entryPrefix
        self.tagPrefix = tagPrefix
        state = Locked(
            State(names: TrackedNames(limit: trackedKeyLimit), tagNames: TrackedNames(limit: trackedKeyLimit)))
    }

    deinit {
        state.withLock { $0.listener }?.stop()
    }

    /// Whether tracking is on now, and the counters.
    var snapshot: (isTracking: Bool, counters: Counters) { state.withLock { ($0.isTracking, $0.counters) } }

    // MARK: - Observers

    /// Registers `observer`, starting the listener for the first one.
    func add(_ observer: @escaping Observer) -> CacheInvalidationSubscription {
        let (id, isRunning) = state.withLock { state -> (UInt64, Bool) in
            state.nextObserverID += 1
            state.observers[state.nextObserverID] = observer
            isObserved.withLock { $0 = true }
            return (state.nextObserverID, state.listener != nil)
        }
        // A listener already running published its `.all` (tracking on) before this observer came: what
        // the observer's tiers hold may predate the names this tier remembers, so it starts from `.all`.
        if isRunning { observer(.all) }
        startListenerIfNeeded()
        return CacheInvalidationSubscription { [weak self] in self?.remove(id) }
    }

    private func remove(_ id: UInt64) {
        let listener = state.withLock { state -> TrackingListener? in
            state.observers[id] = nil
            if state.observers.isEmpty { isObserved.withLock { $0 = false } }
            guard state.observers.isEmpty, let listener = state.listener else { return nil }
            state.listener = nil
            state.generation += 1
            state.isTracking = false
            state.names.removeAll()
            state.tagNames.removeAll()
            state.retired.removeAll { $0.hasExited }
            state.retired.append(listener)
            return listener
        }
        listener?.stop()
    }

    private func startListenerIfNeeded() {
        let generation = state.withLock { state -> UInt64? in
            guard !state.observers.isEmpty, state.listener == nil, !state.isClosed else { return nil }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        // Started outside the lock (it makes a thread); when another caller got in first, this listener
        // is surplus and stopped at once.
        let listener = TrackingListener.start(settings: settings) { [weak self] event in
            self?.handle(event, from: generation)
        }
        let surplus = state.withLock { state -> TrackingListener? in
            guard state.generation == generation, state.listener == nil, !state.observers.isEmpty else {
                return listener
            }
            state.listener = listener
            return nil
        }
        surplus?.stop()
    }

    /// Stops the listener for good and returns once its thread has exited.
    func close() async {
        let listeners = state.withLock { state -> [TrackingListener] in
            state.isClosed = true
            state.isTracking = false
            state.generation += 1
            defer {
                state.listener = nil
                state.retired = []
            }
            return state.retired + (state.listener.map { [$0] } ?? [])
        }
        for listener in listeners {
            listener.stop()
            await listener.waitForExit()
        }
    }

    // MARK: - Names

    /// Remembers that `name` names `key`, while anyone observes: the tier calls it for every key it
    /// reads, writes or removes, before the command is sent.
    func track(_ name: [UInt8], for key: Key) {
        guard isObserved.withLock({ $0 }) else { return }
        state.withLock { state in
            guard !state.observers.isEmpty else { return }
            state.names.insert(name, for: key)
        }
    }

    /// Remembers that `name` is the version key of `tag`, while anyone observes: the tier calls it for
    /// every tag it stamps, checks or removes, so that another process's `INCR` of it maps back to the tag.
    func trackTag(_ name: [UInt8], _ tag: String) {
        state.withLock { state in
            guard !state.observers.isEmpty else { return }
            state.tagNames.insert(name, for: tag)
        }
    }

    // MARK: - Events (the listener's thread)

    private func handle(_ event: TrackingListener.Event, from generation: UInt64) {
        guard state.withLock({ $0.generation == generation }) else { return }
        switch event {
        case .enabled:
            // Changes made while tracking was off were missed: flush, then report healthy.
            publish(.all)
            state.withLock { state in
                state.isTracking = true
                state.counters.trackingConnects += 1
            }
        case .lost:
            let wasTracking = state.withLock { state -> Bool in
                defer { state.isTracking = false }
                if state.isTracking { state.counters.trackingLosses += 1 }
                return state.isTracking
            }
            if wasTracking { publish(.all) }
        case .push(let value):
            for invalidation in invalidations(from: value) { publish(invalidation) }
        }
    }

    /// The invalidations a push stands for (keys, tags, or everything); none for other pushes and names
    /// that concern no copy. A tag's version key that maps to no tag this process used names no entry
    /// held above, unless tag names were dropped from the bounded map: then everything.
    private func invalidations(from push: RESPValue) -> [CacheInvalidation<Key>] {
        guard case .push(let parts) = push, parts.count == 2, parts[0].string == "invalidate" else { return [] }
        guard case .array(let names) = parts[1] else { return [.all] }  // null: FLUSHDB, FLUSHALL
        return state.withLock { state -> [CacheInvalidation<Key>] in
            var keys: [Key] = []
            var tags: [String] = []
            for case .bulkString(let name) in names {
                if name == epochKey { return [.all] }
                if name.starts(with: tagPrefix) {
                    if let tag = state.tagNames.key(for: name) {
                        tags.append(tag)
                    } else if state.tagNames.hasDropped {
                        return [.all]
                    }
                    continue
                }
                guard name.starts(with: entryPrefix) else { continue }
                if let key = state.names.key(for: name) {
                    keys.append(key)
                } else if state.names.hasDropped {
                    return [.all]
                }
            }
            return (keys.isEmpty ? [] : [.keys(keys)]) + (tags.isEmpty ? [] : [.tags(tags)])
        }
    }

    private func publish(_ invalidation: CacheInvalidation<Key>) {
        let observers = state.withLock { state in
            switch invalidation {
            case .keys(let keys): state.counters.keysInvalidated += keys.count
            case .tags: break
            case .all:
                state.counters.fullInvalidations += 1
                state.names.forgetDrops()
                state.tagNames.forgetDrops()
            }
            return Array(state.observers.values)
        }
        for observer in observers { observer(invalidation) }
    }
}
