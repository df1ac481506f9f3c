import CacheCore
import CacheTesting

/// Which test operation (a load-once call or a write or removal) the current task works for, so a tier can
/// tell whose call it is serving. Child tasks and the load's own task inherit it.
enum CurrentOperation {
    @TaskLocal static var id: Int?
}

/// A log of what a stress test's operations did, ordered by one sequence number, from which the test
/// decides afterwards whether a value left in a tier may legally be there.
final class OperationHistory: Sendable {
    struct Mutation {
        /// The key written or removed; `nil` for `removeAll()`.
        var key: String?
        /// The value a write stored; `nil` for a removal.
        var value: Int?
        var start: UInt64 = 0
        var end: UInt64 = 0
        /// When its last tier call returned; the MultiCache ends the mutation only after this.
        var lastTierCallEnd: UInt64 = 0
    }

    private struct State {
        var sequence: UInt64 = 0
        var nextID = 0
        var nextToken = 1
        /// When each load-once call's first tier read began; its miss can be no older.
        var firstRead: [Int: UInt64] = [:]
        var mutations: [Int: Mutation] = [:]
        /// The call whose loader produced each loaded value.
        var loadOwner: [Int: Int] = [:]
        var setValues: [Int: Int] = [:]

        mutating func tick() -> UInt64 {
            sequence += 1
            return sequence
        }
    }

    /// Values a loader returns start here, so they never equal a written value.
    static let firstLoadedValue = 1_000_000

    private let state = Locked(State())

    /// Registers a load-once call and returns its id.
    func beginCall() -> Int {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// A fresh value for a loader run on behalf of call `owner`.
    func loadedValue(owner: Int) -> Int {
        state.withLock { state in
            state.nextToken += 1
            let value = Self.firstLoadedValue + state.nextToken
            state.loadOwner[value] = owner
            return value
        }
    }

    /// Registers a write (of a fresh value, returned) or a removal before it is called.
    func beginMutation(key: String?, writes: Bool) -> (id: Int, value: Int?) {
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
    func endMutation(_ id: Int) {
        state.withLock { state in
            let now = state.tick()
            state.mutations[id]?.end = now
        }
    }

    /// Called by the tier when a read begins on behalf of the current operation.
    func noteTierRead() {
        guard let id = CurrentOperation.id else { return }
        state.withLock { state in
            if state.firstRead[id] == nil, state.mutations[id] == nil { state.firstRead[id] = state.tick() }
        }
    }

    /// Called by the tier when a write or removal returns on behalf of the current operation.
    func noteTierCallEnd() {
        guard let id = CurrentOperation.id else { return }
        state.withLock { state in
            guard state.mutations[id] != nil else { return }
            let now = state.tick()
            state.mutations[id]?.lastTierCallEnd = now
        }
    }

    /// Why `value`, left under `key` in some tier once everything has finished, should not be there; `nil`
    /// when it may be.
    ///
    /// - A loaded value must not outlive a write or removal of its key that was still running, or had not
    ///   begun, when its caller started reading the tiers (a tier call of it returned after that read began).
    /// - A written value must not outlive a write or removal of its key that began after it returned.
    func violation(key: String, value: Int) -> String? {
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
            if let (id, later) = sameKey.first(where: { $0.key != writer && $0.value.start > written.end }) {
                return "written value \(value) (returned at \(written.end)) outlived mutation \(id) \(later)"
            }
            return nil
        }
    }

    /// How many loader runs there were.
    var loadedValueCount: Int { state.withLock { $0.loadOwner.count } }
}

/// A tier over a MemoryCache-like store that reports its calls to an ``OperationHistory`` and yields
/// before each, so concurrent operations interleave at every tier call.
final class ObservedTier: Cache {
    private let base: FaultInjectingCache<String, Int>
    private let history: OperationHistory

    init(history: OperationHistory, clock: ManualClock) {
        self.base = FaultInjectingCache(clock: clock)
        self.history = history
    }

    var clock: any CacheClock { base.clock }

    /// The value held for `key`, read directly (no yielding, nothing reported).
    func storedValue(forKey key: String) async throws -> Int? { try await base.value(forKey: key) }

    func entry(forKey key: String) async throws -> CacheEntry<Int>? {
        history.noteTierRead()
        // Read first, answer later, as a slow tier does: a write may land in between.
        let found = try await base.entry(forKey: key)
        await Task.yield()
        await Task.yield()
        return found
    }

    func setEntry(_ entry: CacheEntry<Int>, forKey key: String) async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.setEntry(entry, forKey: key)
    }

    func value(forKey key: String) async throws -> Int? { try await valueThroughEntry(forKey: key) }

    func setValue(_ value: Int, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    func removeEntry(forKey key: String) async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.removeEntry(forKey: key)
    }

    func removeAll() async throws {
        await Task.yield()
        defer { history.noteTierCallEnd() }
        try await base.removeAll()
    }
}

/// A small seeded generator (SplitMix64, Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014), so a failing stress run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
