import CacheCore
import Foundation
import Testing

@Suite struct ExpiryTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    @Test func neverHasNoExpirationDate() {
        #expect(Expiry.never.expirationDate(from: now) == nil)
    }

    @Test func afterAddsTheDurationToTheWriteTime() {
        #expect(Expiry.after(.seconds(10)).expirationDate(from: now) == now.addingTimeInterval(10))
        #expect(Expiry.after(.milliseconds(1500)).expirationDate(from: now) == now.addingTimeInterval(1.5))
        #expect(Expiry.after(.zero).expirationDate(from: now) == now)
    }

    @Test func atIsTheSameInstantWhateverTheWriteTime() {
        let instant = Date(timeIntervalSince1970: 2_000_000_000)
        #expect(Expiry.at(instant).expirationDate(from: now) == instant)
        #expect(Expiry.at(instant).expirationDate(from: .distantPast) == instant)
    }

    @Test(arguments: [(0.0, 0.0), (1.5, 1.5), (10.0, 10.0), (0.25, 0.25), (-5.0, -5.0), (86_400.0, 86_400.0)])
    func secondsIsARelativeExpiry(_ seconds: Double, _ expectedOffset: TimeInterval) {
        #expect(Expiry.seconds(seconds).expirationDate(from: now) == now.addingTimeInterval(expectedOffset))
    }

    @Test func secondsRoundsToTheNanosecond() {
        #expect(Expiry.seconds(1.5) == .after(.milliseconds(1500)))
        #expect(Expiry.seconds(0.1) == .after(.nanoseconds(100_000_000)))
        #expect(Expiry.seconds(1e-10) == .after(.zero))
    }

    @Test func minutesHoursAndDaysAreWholeSecondsAfterTheWrite() {
        #expect(Expiry.minutes(10) == .after(.seconds(600)))
        #expect(Expiry.hours(2) == .after(.seconds(7_200)))
        #expect(Expiry.days(1.5) == .after(.seconds(129_600)))
        #expect(Expiry.minutes(-1) == .after(.seconds(-60)))
        #expect(Expiry.days(1e9) == .never)
    }

    @Test func outOfRangeSecondsDoNotCrash() {
        // Beyond what Int64 nanoseconds hold: a very long TTL never expires, anything else is expired.
        #expect(Expiry.seconds(.infinity) == .never)
        #expect(Expiry.seconds(1e12) == .never)
        #expect(Expiry.seconds(-.infinity) == .after(.zero))
        #expect(Expiry.seconds(-1e12) == .after(.zero))
        #expect(Expiry.seconds(.nan) == .after(.zero))
        // The largest TTL that still fits keeps its value.
        #expect(Expiry.seconds(9e9) == .after(.seconds(9_000_000_000)))
    }

    @Test func earliestPicksTheEarlierInstantAndTreatsNilAsNever() {
        let early = now
        let late = now.addingTimeInterval(60)
        #expect(Expiry.earliest(nil, nil) == nil)
        #expect(Expiry.earliest(early, nil) == early)
        #expect(Expiry.earliest(nil, late) == late)
        #expect(Expiry.earliest(early, late) == early)
        #expect(Expiry.earliest(late, early) == early)
        #expect(Expiry.earliest(late, late) == late)
    }

    @Test func durationTimeIntervalKeepsFractionsAndSign() {
        #expect(Duration.seconds(3).timeInterval == 3)
        #expect(Duration.milliseconds(1500).timeInterval == 1.5)
        #expect(Duration.milliseconds(-1500).timeInterval == -1.5)
        #expect(Duration.nanoseconds(1).timeInterval == 1e-9)
        #expect(Duration.zero.timeInterval == 0)
    }
}
