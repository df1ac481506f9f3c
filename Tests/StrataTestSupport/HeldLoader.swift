/// A loader a test holds open, the way `FaultInjectingCache` holds a tier call: the loader calls ``hold()``,
/// which reports that the load has started and then waits until the test calls ``release()``.
///
/// The test waits for the event (``waitUntilHeld()``, ``waitUntilCancelled()``) instead of polling
/// counters. A wait for an event that never comes is ended by the test's time limit, so a broken feature
/// fails the test rather than hanging it.
public final class HeldLoader: Sendable {
    private let held = Gate()
    private let released = Gate()
    private let cancelled = Gate()

    /// A loader not yet started.
    public init() {}

    /// Call from the loader: reports the start, then suspends until ``release()``.
    ///
    /// - Throws: `CancellationError` when the load's task is cancelled first (``waitUntilCancelled()``
    ///   then returns).
    public func hold() async throws {
        held.open()
        do {
            try await released.wait()
        } catch {
            cancelled.open()
            throw error
        }
    }

    /// Suspends until the loader has called ``hold()``.
    ///
    /// - Throws: `CancellationError` when the test's task is cancelled first.
    public func waitUntilHeld() async throws { try await held.wait() }

    /// Suspends until a held loader was cancelled.
    ///
    /// - Throws: `CancellationError` when the test's task is cancelled first.
    public func waitUntilCancelled() async throws { try await cancelled.wait() }

    /// Lets every held (and later) ``hold()`` return.
    public func release() { released.open() }
}
