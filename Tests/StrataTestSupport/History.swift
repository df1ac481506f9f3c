internal import CacheCore

/// Which test operation (a load-once call, or a write or removal) the current task works for, so a tier
/// can tell ``History`` whose call it is serving. Child tasks and a load's own task inherit it.
public enum CurrentOperation {
    /// The id ``History/beginCall()`` or ``History/beginMutation(key:writes:)`` returned.
    @TaskLocal public static var id: Int?
}

/// The history oracle of the concurrency tests: a log of where every value came from and when every write
/// and removal ran, ordered by one sequence number taken under one lock, from which a test decides whether
/// a value it read, or one left in a tier, may legally be there.
///
/// Values are integers the history hands out: a write stores the value ``beginMutation(key:writes:)``
/// returns, a loader returns ``loadedValue(owner:)``; the two ranges never meet. Sequence numbers are
/// taken just before a call and just after it returns, which widens each interval, so a check can miss a
/// late violation but never flags a legal result.
///
/// Two rules:
/// - While running (``fence(for:)``, ``mayAppear(_:under:)``): once a removal of a key (or a `removeAll`)
///   has returned, a read that starts afterwards must not see a value loaded by a load that started before
///   the removal did, nor a value whose write had returned before the removal started.
/// - Once everything has finished (``violation(key:value:)``): a loaded value must not outlive a write or
///   removal of its key that was still running, or had not begun, when its caller started reading the
///   tiers; a written value must not outlive a write or removal of its key that began after it returned.
///   This rule needs the tiers to report their calls (``noteTierRead()``, ``noteTierCallEnd()``).
public final class History<Key: Hashable & Sendable>: Sendable {
    private struct Mutation {
        /// The key written or removed; `nil` for `removeAll()`.
        var key: Key?
        /// The value a write stored; `nil` for a removal.
        var value: Int?
        var start: UInt64
        var end: UInt64?
        /// When its last tier call returned; the cache ends the mutation only after this.
        var lastTierCallEnd: UInt64 = 0
    }

    private struct State {
        var sequence: UInt64 = 0
        var nextID = 0
        var nextToken = 1
        /// When each load-once call's first tier read began; its miss can be no older.
        var firstRead: [Int: UInt64] = [:]
        var mutations: [Int: Mutation] = [:]
        /// The call whose loader produced each loaded value, and when the loader asked for it.
        var loadOwner: [Int: Int] = [:]
        var loadStart: [Int: UInt64] = [:]
        /// The mutation that wrote each written value.
        var setValues: [Int: Int] = [:]
        /// The latest start of a returned removal of each key, and of a returned `removeAll()`.
        var keyFence: [Key: UInt64] = [:]
        var globalFence: UInt64 = 0

        mutating func tick() -> UInt64 {
            sequence += 1
            return sequence
        }
    }

    /// Values a loader returns start here, so they never equal a written value.
    public static var firstLoadedValue: Int { 1_000_000 }

    private let state = Locked(State())

    /// An empty history.
    public init() {}

    /// Registers a load-once call and returns its id (run the call under `CurrentOperation.$id`).
    public func beginCall() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// A fresh value for a loader run on behalf of call `owner`; call it when the loader starts.
    public func loadedValue(owner: Int) -> Int {
        state.withLock { state in
            state.nextToken += 1
            let value = Self.firstLoadedValue + state.nextToken
            state.loadOwner[value] = owner
            state.loadStart[value] = state.tick()
            return value
        }
    }

    /// Registers a write (of a fresh value, returned) or a removal of `key` (every key when `nil`) just
    /// before it is called.
    public func beginMutation(key: Key?, writes: Bool) -> (id: Int, value: Int?) {
        state.withLock { state in
            state.nextID += 1
            state.nextToken += 1
            let value = writes ? state.nextToken : nil
            state.mutations[state.nextID] = Mutation(key: key, value: value, start: state.tick())
            if let value { state.setValues[value] = state.nextID }
            return (state.nextID, value)
        }
    }

    /// Notes that mutation `id` has returned.
    public func endMutation(_ id: Int) {
        state.withLock { state in
            let now = state.tick()
            guard var mutation = state.mutations[id] else { return }
            mutation.end = now
            state.mutations[id] = mutation
            guard mutation.value == nil else { return }
            if let key = mutation.key {
                state.keyFence[key] = max(state.keyFence[key] ?? 0, mutation.start)
            } else {
                state.globalFence = max(state.globalFence, mutation.start)
            }
        }
    }

    /// Called by a tier when a read begins on behalf of the current operation.
    public func noteTierRead() {
        guard let id = CurrentOperation.id else { return }
        state.withLock { state in
            if state.firstRead[id] == nil, state.mutations[id] == nil { state.firstRead[id] = state.tick() }
        }
    }

    /// Called by a tier when a write or removal returns on behalf of the current operation.
    public func noteTierCallEnd() {
        guard let id = CurrentOperation.id else { return }
        state.withLock { state in
            guard state.mutations[id] != nil else { return }
            let now = state.tick()
            state.mutations[id]?.lastTierCallEnd = now
        }
    }

    /// The fence in force for a read of `key` that starts now: take it just before the read.
    public func fence(for key: Key) -> UInt64 {
        state.withLock { max($0.keyFence[key] ?? 0, $0.globalFence) }
    }

    /// Whether `value` may be seen by a read that began under `fence`.
    public func mayAppear(_ value: Int, under fence: UInt64) -> Bool {
        state.withLock { state in
            if let start = state.loadStart[value] { return start >= fence }
            guard let writer = state.setValues[value], let written = state.mutations[writer] else { return false }
            return (written.end ?? .max) >= fence
        }
    }

    /// Why `value`, left under `key` in some tier once everything has finished, should not be there; `nil`
    /// when it may be.
    public func violation(key: Key, value: Int) -> String? {
        state.withLock { state in
            let sameKey = state.mutations.filter { $0.value.key == nil || $0.value.key == key }
            if value >= Self.firstLoadedValue {
                guard let owner = state.loadOwner[value], let read = state.firstRead[owner] else {
                    return "loaded value \(value) has no recorded caller read"
                }
                if let (id, later) = sameKey.first(where: { $0.value.lastTierCallEnd > read }) {
                    return "loaded value \(value) (caller read at \(read)) outlived mutation \(id) \(later)"
                }
                return nil
            }
            guard let writer = state.setValues[value], let written = state.mutations[writer] else {
                return "value \(value) was never written"
            }
            let writtenEnd = written.end ?? .max
            if let (id, later) = sameKey.first(where: { $0.key != writer && $0.value.start > writtenEnd }) {
                return "written value \(value) (returned at \(writtenEnd)) outlived mutation \(id) \(later)"
            }
            return nil
        }
    }

    /// A readable account of where `value` came from, for failure messages.
    public func describe(_ value: Int) -> String {
        state.withLock { state in
            if let start = state.loadStart[value] {
                return "loaded value \(value) started at \(start), now \(state.sequence)"
            }
            guard let writer = state.setValues[value], let written = state.mutations[writer] else {
                return "unknown value \(value)"
            }
            return "written value \(value) started at \(written.start), returned at "
                + "\(written.end.map(String.init) ?? "-"), now \(state.sequence)"
        }
    }

    /// How many loader runs there were.
    public var loadedValueCount: Int { state.withLock { $0.loadOwner.count } }
}
