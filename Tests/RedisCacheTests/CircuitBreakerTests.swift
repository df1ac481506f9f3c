import Testing

@testable import RedisCache

/// The backoff and breaker policy with injected time and randomness: no sleeping.
@Suite struct CircuitBreakerTests {
    @Test func ceilingDoublesFromTheMinimumUpToTheMaximum() {
        let breaker = CircuitBreaker(failureThreshold: 3, minimumDelay: .milliseconds(50), maximumDelay: .seconds(1))
        let ceilings = (1...7).map { breaker.ceiling(afterFailures: $0) }
        #expect(
            ceilings == [50, 100, 200, 400, 800, 1000, 1000].map { Duration.milliseconds($0) })
    }

    @Test func opensAfterTheThresholdAndClosesOnSuccess() {
        var breaker = CircuitBreaker(failureThreshold: 3)
        breaker.recordFailure(at: .zero, randomFraction: 1)
        breaker.recordFailure(at: .zero, randomFraction: 1)
        #expect(!breaker.isOpen)
        breaker.recordFailure(at: .zero, randomFraction: 1)
        #expect(breaker.isOpen)
        breaker.recordSuccess()
        #expect(!breaker.isOpen)
        #expect(breaker.allowsAttempt(at: .zero))
    }

    @Test func fullJitterPicksTheWaitInsideTheCeiling() {
        var breaker = CircuitBreaker(minimumDelay: .milliseconds(50), maximumDelay: .seconds(1))
        // Given the third failure (ceiling 200 ms) at t = 10 s with a random fraction of 0.25
        breaker.recordFailure(at: .seconds(10), randomFraction: 0)
        breaker.recordFailure(at: .seconds(10), randomFraction: 0)
        let wait = breaker.recordFailure(at: .seconds(10), randomFraction: 0.25)
        // Then the wait is 50 ms and the next attempt is allowed from 10.05 s on, not before
        #expect(wait == .milliseconds(50))
        #expect(!breaker.allowsAttempt(at: .milliseconds(10_049)))
        #expect(breaker.allowsAttempt(at: .milliseconds(10_050)))
    }

    @Test func aZeroJitterStillWaitsTheFloor() {
        var breaker = CircuitBreaker()
        let wait = breaker.recordFailure(at: .zero, randomFraction: 0)
        #expect(wait == .milliseconds(5))
        #expect(!breaker.allowsAttempt(at: .milliseconds(4)))
    }

    @Test func aServerDownForADayStillWaitsAtMostTheMaximumBetweenProbes() {
        // Given a breaker after 100,000 consecutive failures (a probe a second for over a day): doubling the
        // first ceiling that often would overflow any duration
        var breaker = CircuitBreaker(minimumDelay: .milliseconds(50), maximumDelay: .seconds(1))
        #expect(breaker.ceiling(afterFailures: 100_000) == .seconds(1))
        for second in 0..<100 { breaker.recordFailure(at: .seconds(second), randomFraction: 1) }
        // Then the wait stays the maximum, and the breaker stays open
        #expect(breaker.recordFailure(at: .seconds(100), randomFraction: 1) == .seconds(1))
        #expect(breaker.isOpen)
    }

    @Test(arguments: [1, 2, 3, 5])
    func opensAtExactlyItsThreshold(threshold: Int) {
        var breaker = CircuitBreaker(failureThreshold: threshold)
        for _ in 1..<threshold { breaker.recordFailure(at: .zero, randomFraction: 0) }
        #expect(!breaker.isOpen, "one failure short of \(threshold)")
        breaker.recordFailure(at: .zero, randomFraction: 0)
        #expect(breaker.isOpen, "at \(threshold)")
    }
}
