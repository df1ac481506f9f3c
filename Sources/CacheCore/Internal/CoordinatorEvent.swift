/// A moment in the coordination that tests wait for instead of polling counters; reported to the closure
/// given to ``CoordinatorStorage/observe(_:)``.
package enum CoordinatorEvent: Sendable, Hashable {
    /// A caller joined a load another caller had started (counted in `loadsShared`).
    case joinedLoad
    /// A write, removal or invalidation's removal parked until stores already under way end.
    case parkedMutation
    /// A load started with `LoadOptions` or by a batch ended: its value was stored (or skipped) and its
    /// waiters answered.
    case loadFinished
    /// A caller stopped waiting for a load at a soft or hard timeout; the load goes on.
    case waiterTimedOut
}
