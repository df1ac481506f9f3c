import CacheCore

/// A log of where every value came from and which removals have finished, so a test can tell whether a
/// value it read is allowed to be visible.
///
/// Times are ticks of one counter taken under one lock, so they order events across tasks. The rule it
/// checks: once a removal of a key (or a `removeAll`) has returned, a read that starts afterwards must not
/// see a value loaded by a load that started before the removal did, nor a value whose write had already
/// returned before the removal started. Ticks are taken just before a call and just after it returns, which
/// widens each interval, so the check can miss a late violation but never flags a legal result.
final class History: Sendable {
    private struct Origin {
        var isLoad: Bool
        var start: Int
        var end: Int?
    }

    private struct State {
        var now = 0
        var nextID = 0
        var keyFence: [Int: Int] = [:]
        var globalFence = 0
        var origins: [Int: Origin] = [:]
    }

    private let state = Locked(State())

    /// A tick to call before starting an operation.
    func tick() -> Int {
        state.withLock {
            $0.now += 1; return $0.now
        }
    }

    /// Registers a value about to be loaded; returns its id.
    func beginLoad() -> Int { begin(isLoad: true) }

    /// Registers a value about to be written; returns its id.
    func beginWrite() -> Int { begin(isLoad: false) }

    /// Marks the write of `id` as returned.
    func endWrite(_ id: Int) {
        state.withLock { state in
            state.now += 1
            state.origins[id]?.end = state.now
        }
    }

    /// Records that a removal of `key` (every key when `nil`) that started at `start` has returned.
    func removalFinished(key: Int?, startedAt start: Int) {
        state.withLock { state in
            if let key {
                state.keyFence[key] = max(state.keyFence[key] ?? 0, start)
            } else {
                state.globalFence = max(state.globalFence, start)
            }
        }
    }

    /// The fence in force for a read of `key` that starts now.
    func fence(for key: Int) -> Int {
        state.withLock { max($0.keyFence[key] ?? 0, $0.globalFence) }
    }

    /// A readable account of where value `id` came from, for failure messages.
    func describe(_ id: Int) -> String {
        state.withLock { state in
            guard let origin = state.origins[id] else { return "unknown id \(id)" }
            return "\(origin.isLoad ? "load" : "write") \(id) started at \(origin.start), "
                + "returned at \(origin.end.map(String.init) ?? "-"), now \(state.now)"
        }
    }

    /// Whether the value `id` may be seen by a read that began under `fence`.
    func mayAppear(_ id: Int, under fence: Int) -> Bool {
        state.withLock { state in
            guard let origin = state.origins[id] else { return false }
            return origin.isLoad ? origin.start >= fence : (origin.end ?? Int.max) >= fence
        }
    }

    private func begin(isLoad: Bool) -> Int {
        state.withLock { state in
            state.now += 1
            state.nextID += 1
            state.origins[state.nextID] = Origin(isLoad: isLoad, start: state.now)
            return state.nextID
        }
    }
}
