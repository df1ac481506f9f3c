import CacheCore
import RedisConnection

/// The Redis tier's side of invalidation: its observers, its tracking listeners, the names it can map
/// back to keys, and the translation of tracking messages into ``CacheInvalidation``s.
///
/// - The listeners run while at least one observer is registered: started by the first, stopped when
///   the last is cancelled or the hub is released. One listener per node: the server alone, or on a Redis
///   Cluster each primary of the map (tracking is per node: a primary reports writes to its own slots only),
///   followed through ``follow(_:)`` as the map changes.
/// - A push names Redis keys. A name under `…:k:` that this process used recently maps to its key and
///   is published as `.keys`; an unknown one names no key this process holds above, unless names were
///   dropped from the bounded map (``TrackedNames``), and is then published as `.all`. The epoch key
///   (`removeAll()` anywhere) and a `null` payload (`FLUSHDB`, `FLUSHALL`) are published as `.all`;
///   other names of the namespace (the key-check record) name no entry and are ignored. A tag's version
///   key (`…:t:`, advanced by `removeAll(taggedWith:)` in another process) that maps back to a tag this
///   process used is published as `.tags`.
/// - A lost listener publishes what it may have missed at once, and again once tracking is back on it: on
///   one server `.all`; on a cluster only the keys of the slots that node serves (a scoped flush), unless it
///   serves the namespace's counters (then `.all`). ``isTracking`` is true while every node's listener is on.
///
/// Thread safety: the state sits behind one lock, never held while an observer runs; observers are
/// called on the listeners' threads, one invalidation at a time per listener.
final class InvalidationHub<Key: Hashable & Sendable>: Sendable {
    typealias Observer = @Sendable (CacheInvalidation<Key>) -> Void
    typealias Node = RedisConnection.Address

    /// One node's listener and whether tracking is on on it.
    struct Running: Sendable {
        /// `nil` while the listener is being started: the node is reserved first, with the id its events carry,
        /// so an event that comes before the start returns (a fast "tracking on") is not taken for a stale one.
        var listener: TrackingListener?
        /// Tells this listener's events from those of a stopped one on the same node.
        var id: UInt64
        var isTracking = false
    }

    struct State: Sendable {
        var observers: [UInt64: Observer] = [:]
        var nextObserverID: UInt64 = 0
        var listeners: [Node: Running] = [:]
        /// Listeners stopped (their last observer left, their node left the map), until ``close()`` waits for them.
        var retired: [TrackingListener] = []
        /// Advanced for each listener started.
        var nextListenerID: UInt64 = 0
        /// The cluster's map, once the tier found a cluster; `nil` for one server.
        var topology: ClusterTopology?
        var names: TrackedNames<Key>
        /// The tags whose version keys this process read or advanced, by name (bounded like `names`).
        var tagNames: TrackedNames<String>
        /// Set by ``close()``: no listener starts again.
        var isClosed = false
        /// Whether a listener's first attempt ended (tracking on, its `.all` published, or the attempt
        /// failed) since listeners last started from none; see ``whenStarted(_:)``.
        var hasStarted = false
        var startWaiters: [@Sendable () -> Void] = []
        var counters = Counters()

        /// The nodes to listen on: the server, or each primary of the map.
        func nodes(server: Node) -> [Node] { topology?.primaries ?? [server] }
        var isTracking: Bool { !listeners.isEmpty && listeners.values.allSatisfy(\.isTracking) }
    }

    /// What ``RedisCacheHealth`` reports of tracking.
    struct Counters: Sendable {
        var trackingConnects = 0
        var trackingLosses = 0
        var keysInvalidated = 0
        var fullInvalidations = 0
        /// Flushes of one cluster node's keys (its listener was lost or came back).
        var scopedInvalidations = 0
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
        for running in state.withLock({ $0.listeners.values }) { running.listener?.stop() }
    }

    /// The configured server, the one node listened on until a cluster's map names its primaries.
    private var server: Node { Node(host: settings.host, port: settings.port) }

    /// Whether tracking is on now (on every node), and the counters.
    var snapshot: (isTracking: Bool, counters: Counters) { state.withLock { ($0.isTracking, $0.counters) } }

    /// The nodes whose listener has tracking on now.
    var trackingNodes: Set<Node> { state.withLock { Set($0.listeners.filter(\.value.isTracking).keys) } }

    // MARK: - Observers

    /// Registers `observer`, starting the listeners for the first one.
    func add(_ observer: @escaping Observer) -> CacheInvalidationSubscription {
        let (id, isRunning) = state.withLock { state -> (UInt64, Bool) in
            state.nextObserverID += 1
            state.observers[state.nextObserverID] = observer
            isObserved.withLock { $0 = true }
            return (state.nextObserverID, !state.listeners.isEmpty)
        }
        // A listener already running published its `.all` (tracking on) before this observer came: what
        // the observer's tiers hold may predate the names this tier remembers, so it starts from `.all`.
        if isRunning { observer(.all) }
        reconcileListeners()
        return CacheInvalidationSubscription { [weak self] in self?.remove(id) }
    }

    private func remove(_ id: UInt64) {
        let stopped = state.withLock { state -> [TrackingListener] in
            state.observers[id] = nil
            if state.observers.isEmpty { isObserved.withLock { $0 = false } }
            guard state.observers.isEmpty, !state.listeners.isEmpty else { return [] }
            let listeners = state.listeners.values.compactMap(\.listener)
            state.listeners = [:]
            state.names.removeAll()
            state.tagNames.removeAll()
            // The next observer starts a new listener, whose first `.all` it waits for.
            state.hasStarted = false
            state.retired.removeAll { $0.hasExited }
            state.retired += listeners
            return listeners
        }
        for listener in stopped { listener.stop() }
    }

    /// Puts a cluster's map in use: listeners start on its new primaries and stop on nodes that are no longer
    /// primaries. Called with each map the cluster layer reads.
    func follow(_ topology: ClusterTopology) {
        let changed = state.withLock { state -> Bool in
            defer { state.topology = topology }
            return state.topology?.primaries != topology.primaries
        }
        if changed { reconcileListeners() }
    }

    /// Starts a listener on each node to listen on that has none, and stops those on nodes no longer listed.
    private func reconcileListeners() {
        let server = server
        let (missing, surplus) = state.withLock { state -> ([Node], [TrackingListener]) in
            guard !state.observers.isEmpty, !state.isClosed else { return ([], []) }
            let nodes = state.nodes(server: server)
            var surplus: [TrackingListener] = []
            for (node, running) in state.listeners where !nodes.contains(node) {
                state.listeners[node] = nil
                // A listener still starting finds its reservation gone and stops itself.
                guard let listener = running.listener else { continue }
                state.retired.removeAll { $0.hasExited }
                state.retired.append(listener)
                surplus.append(listener)
            }
            return (nodes.filter { state.listeners[$0] == nil }, surplus)
        }
        for listener in surplus { listener.stop() }
        for node in missing { startListener(on: node) }
    }

    private func startListener(on node: Node) {
        // The node is reserved before the thread starts: its events are accepted from the first one.
        let id = state.withLock { state -> UInt64? in
            guard state.listeners[node] == nil else { return nil }  // another caller is starting it
            state.nextListenerID += 1
            state.listeners[node] = Running(listener: nil, id: state.nextListenerID)
            return state.nextListenerID
        }
        guard let id else { return }
        var settings = settings
        if node != server {
            // A cluster node found in the map: its own address, no fallbacks (those are the seed's).
            settings.host = node.host
            settings.port = node.port
            settings.fallbackAddresses = []
        }
        // Started outside the lock (it makes a thread). When the reservation was given up meanwhile (the node
        // left the map, the last observer left, the hub closed), the listener is surplus and stopped at once.
        let listener = TrackingListener.start(
            settings: settings,
            onEvent: { [weak self] event in
                self?.handle(event, on: node, from: id)
            })
        let kept = state.withLock { state -> Bool in
            guard state.listeners[node]?.id == id else { return false }
            guard let listener else {
                state.listeners[node] = nil  // no descriptor for its wake pipe: the next reconcile tries again
                return false
            }
            state.listeners[node]?.listener = listener
            return true
        }
        if !kept { listener?.stop() }
        // No thread to report a first attempt: nobody may wait for one.
        if listener == nil { reportStarted() }
    }

    /// Stops the listeners for good and returns once their threads have exited.
    func close() async {
        reportStarted()
        let listeners = state.withLock { state -> [TrackingListener] in
            state.isClosed = true
            defer {
                state.listeners = [:]
                state.retired = []
            }
            return state.retired + state.listeners.values.compactMap(\.listener)
        }
        for listener in listeners {
            listener.stop()
            await listener.waitForExit()
        }
    }

    // MARK: - Start

    /// Calls `started` once a listener's first attempt has ended: tracking came on and its `.all` was
    /// published to every observer, or the attempt failed; at once when that happened already, when no
    /// listener runs (no observer), or when the hub is closed.
    func whenStarted(_ started: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard !state.hasStarted, !state.isClosed, !state.listeners.isEmpty else { return true }
            state.startWaiters.append(started)
            return false
        }
        if now { started() }
    }

    /// Marks the first attempt as ended and calls those waiting for it.
    private func reportStarted() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            state.hasStarted = true
            defer { state.startWaiters = [] }
            return state.startWaiters
        }
        for waiter in waiters { waiter() }
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

    // MARK: - Events (the listeners' threads)

    private func handle(_ event: TrackingListener.Event, on node: Node, from id: UInt64) {
        guard state.withLock({ $0.listeners[node]?.id == id }) else { return }
        switch event {
        case .enabled:
            // Changes made while tracking was off on this node were missed: flush, then report healthy.
            publish(missed(on: node))
            state.withLock { state in
                state.listeners[node]?.isTracking = true
                state.counters.trackingConnects += 1
            }
            reportStarted()
        case .lost:
            let wasTracking = state.withLock { state -> Bool in
                defer { state.listeners[node]?.isTracking = false }
                let wasTracking = state.listeners[node]?.isTracking ?? false
                if wasTracking { state.counters.trackingLosses += 1 }
                return wasTracking
            }
            if wasTracking { publish(missed(on: node)) }
            // A first attempt that failed: loads held for it go on without tracking, as they would later.
            reportStarted()
        case .push(let value):
            for invalidation in invalidations(from: value) { publish(invalidation) }
        }
    }

    /// What to flush when tracking on `node` was off a while: everything on one server; on a cluster the keys
    /// of the names in the node's slots, or everything when the node serves the namespace's counters (a missed
    /// epoch or tag advance reaches any entry) or names were dropped (an unknown copy may sit in its slots).
    private func missed(on node: Node) -> CacheInvalidation<Key> {
        let epochSlot = HashSlot(key: epochKey)
        return state.withLock { state -> CacheInvalidation<Key> in
            guard let topology = state.topology, topology.primary(for: epochSlot) != node,
                !state.names.hasDropped
            else { return .all }
            state.counters.scopedInvalidations += 1
            return .keys(state.names.keys { topology.primary(for: HashSlot(key: $0)) == node })
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
        if case .keys(let keys) = invalidation, keys.isEmpty { return }
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
