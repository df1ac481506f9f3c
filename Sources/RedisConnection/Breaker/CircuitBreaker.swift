/// When to try the server again after failures: exponential backoff with full jitter, and a breaker that
/// makes requests fail at once after ``failureThreshold`` consecutive failures.
///
/// Backoff: after the n-th consecutive failure the next attempt waits a uniformly random time in
/// `[floor, min(maximumDelay, minimumDelay · 2ⁿ⁻¹)]` ("full jitter", Marc Brooker, *Exponential Backoff
/// And Jitter*, AWS Architecture Blog, 2015), where the 5 ms floor stops a refused connection from
/// spinning. While the breaker is open, the connection probes once per such interval in the background;
/// the first success closes it.
///
/// Time and randomness are passed in, so tests decide them without sleeping. Thread safety: a value type;
/// the connection keeps it under its lock.
package struct CircuitBreaker: Sendable, Equatable {
    /// Consecutive failures that open the breaker. Default 3.
    package var failureThreshold: Int
    /// The backoff ceiling after the first failure. Default 50 ms.
    package var minimumDelay: Duration
    /// The largest backoff ceiling. Default 1 s.
    package var maximumDelay: Duration
    /// Failures since the last success.
    package private(set) var consecutiveFailures = 0
    /// The earliest time of the next attempt, on the caller's time line; `nil` before any failure.
    package private(set) var nextAttempt: Duration?

    /// The shortest wait between attempts.
    static let floor = Duration.milliseconds(5)

    /// Creates a closed breaker.
    ///
    /// - Parameters:
    ///   - failureThreshold: Consecutive failures that open it (at least 1).
    ///   - minimumDelay: Backoff ceiling after the first failure.
    ///   - maximumDelay: Largest backoff ceiling.
    package init(
        failureThreshold: Int = 3, minimumDelay: Duration = .milliseconds(50), maximumDelay: Duration = .seconds(1)
    ) {
        self.failureThreshold = max(1, failureThreshold)
        self.minimumDelay = minimumDelay
        self.maximumDelay = max(minimumDelay, maximumDelay)
    }

    /// Whether requests should fail at once with ``ConnectionError/Code/unavailable``.
    package var isOpen: Bool { consecutiveFailures >= failureThreshold }

    /// The backoff ceiling after `failures` consecutive failures: `min(maximumDelay, minimumDelay · 2ⁿ⁻¹)`.
    ///
    /// - Parameter failures: Consecutive failures so far (at least 1).
    /// - Returns: The largest wait before the next attempt.
    package func ceiling(afterFailures failures: Int) -> Duration {
        var ceiling = minimumDelay
        for _ in 1..<max(1, failures) {
            ceiling *= 2
            if ceiling >= maximumDelay { return maximumDelay }
        }
        return min(ceiling, maximumDelay)
    }

    /// Whether an attempt may start at `now`.
    ///
    /// - Parameter now: The current time on the caller's time line.
    package func allowsAttempt(at now: Duration) -> Bool {
        nextAttempt.map { now >= $0 } ?? true
    }

    /// Records a failed attempt or a lost connection and schedules the next attempt.
    ///
    /// - Parameters:
    ///   - now: The current time on the caller's time line.
    ///   - randomFraction: A uniform random number in `0...1` that picks the wait inside the ceiling.
    /// - Returns: The wait chosen before the next attempt.
    @discardableResult
    package mutating func recordFailure(at now: Duration, randomFraction: Double) -> Duration {
        consecutiveFailures += 1
        let ceiling = ceiling(afterFailures: consecutiveFailures)
        let wait = max(Self.floor, ceiling * min(1, max(0, randomFraction)))
        nextAttempt = now + wait
        return wait
    }

    /// Records a success: the breaker closes and the backoff starts over.
    package mutating func recordSuccess() {
        consecutiveFailures = 0
        nextAttempt = nil
    }
}
