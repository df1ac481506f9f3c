import CacheCore
import CacheTesting
import Foundation
import Testing

@Suite struct ManualClockTests {
    @Test func startsAtAFixedInstantByDefault() {
        #expect(ManualClock().now == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(ManualClock.defaultStart == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(ManualClock().now.ISO8601Format() == "2026-01-01T00:00:00Z")
    }

    @Test func startsAtTheGivenInstant() {
        let start = Date(timeIntervalSince1970: 42)
        #expect(ManualClock(start: start).now == start)
    }

    @Test func standsStillUntilMoved() {
        let clock = ManualClock()
        let first = clock.now
        #expect(clock.now == first)
    }

    @Test func advancesBySecondsAndByDuration() {
        let clock = ManualClock()
        let start = clock.now
        clock.advance(by: 1.5)
        #expect(clock.now == start.addingTimeInterval(1.5))
        clock.advance(by: .milliseconds(250))
        #expect(clock.now == start.addingTimeInterval(1.75))
    }

    @Test func movesBackwardsWithANegativeAdvanceOrAnEarlierDate() {
        let clock = ManualClock()
        let start = clock.now
        clock.advance(by: -30)
        #expect(clock.now == start.addingTimeInterval(-30))
        clock.advance(by: .seconds(-30))
        #expect(clock.now == start.addingTimeInterval(-60))
        clock.set(to: start.addingTimeInterval(-3600))
        #expect(clock.now == start.addingTimeInterval(-3600))
        clock.set(to: start)
        #expect(clock.now == start)
    }

    @Test func concurrentAdvancesAreAllApplied() async {
        let clock = ManualClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { clock.advance(by: 1) } }
        }
        #expect(clock.now == start.addingTimeInterval(100))
    }

    @Test func worksAsAnyCacheClock() {
        let manual = ManualClock()
        let clock: any CacheClock = manual
        manual.advance(by: 10)
        #expect(clock.now == manual.now)
    }
}
