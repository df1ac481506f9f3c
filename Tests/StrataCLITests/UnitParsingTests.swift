import Foundation
import Testing

/// Every duration and size unit the tool accepts, each pinned to its own length, and every reason a value is
/// refused: a unit read as another one, or a value refused for the wrong reason, fails here.
///
/// Expiry is judged on the tool's clock shifted by `clockOffset`. A "still live" read comes a minute or more
/// before the expiry, so a slow process start cannot turn it into a miss; a "gone" read comes at the expiry
/// itself, where any delay only makes the entry older.
@Suite(.serialized)
struct UnitParsingTests {
    @Test(arguments: [
        ("90000ms", 90.0), ("90", 90), ("90s", 90), ("5m", 300), ("2h", 7_200), ("3d", 259_200),
        ("1w", 604_800), ("2w", 1_209_600), ("1w1d", 691_200), ("1h30m", 5_400), ("1.5h", 5_400),
    ])
    func aTTLLastsExactlyItsUnitsWorth(ttl: String, seconds: Double) throws {
        // Given an entry stored with --ttl TEXT
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v", "--ttl", ttl]).status == 0)

        // When it is read a minute before that many seconds have passed, and again when they have
        let before = try harness.run(["get", "k"], clockOffset: seconds - 60)
        let at = try harness.run(["get", "k"], clockOffset: seconds)

        // Then it is live before and gone at the end: the unit is worth exactly that many seconds
        #expect(before.status == 0, "--ttl \(ttl) ended before \(seconds - 60) s")
        #expect(at.status == 1, "--ttl \(ttl) still live at \(seconds) s")
    }

    @Test func millisecondsAreThousandthsOfASecond() throws {
        // Given an entry stored for 500 ms
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v", "--ttl", "500ms"]).status == 0)

        // Then half a second later it is gone: not 500 seconds, not 5
        #expect(try harness.run(["get", "k"], clockOffset: 0.5).status == 1)
    }

    @Test func theLongestTTLIsAcceptedAndOneSecondMoreIsRefused() throws {
        // Given the documented maximum, 100 years of 366 days, in seconds and in days
        let harness = try StrataHarness()

        // Then the maximum itself is a valid TTL, and a second more is a usage error saying why
        #expect(try harness.run(["set", "k", "v", "--ttl", "3162240000"]).status == 0)
        #expect(try harness.run(["set", "k", "v", "--ttl", "36600d"]).status == 0)
        let over = try harness.run(["set", "k", "v", "--ttl", "36600d1s"])
        #expect(over.status == 2)
        #expect(
            over.errorLines.first
                == "strata: option --ttl '36600d1s' is too long (at most 3162240000 seconds: 100 years of 366 days)")
    }

    @Test(arguments: ["-5s", "-5", "-1w"])
    func aNegativeDurationIsRefusedAsNegative(ttl: String) throws {
        // Given a negative TTL, which the number parser would also refuse, but with a vaguer reason
        let harness = try StrataHarness()

        let result = try harness.run(["set", "k", "v", "--ttl", ttl])

        // Then the message names the real mistake
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: option --ttl '\(ttl)' must not be negative")
    }

    @Test(arguments: ["2weeks", "10min", "1hour", "3days", "5sec", "100msec", "10M", "1H", "1W", "1y", "s"])
    func aUnitThatIsNotOneOfTheShortLowerCaseOnesIsRefused(ttl: String) throws {
        // Given a TTL glued to a spelled-out, upper-case or unknown unit (or a unit without a number)
        let harness = try StrataHarness()

        let result = try harness.run(["set", "k", "v", "--ttl", ttl])

        // Then it is a usage error listing the units that work, and nothing was stored
        #expect(result.status == 2)
        #expect(
            result.errorLines.first
                == "strata: option --ttl '\(ttl)' is not a duration; expected a number and a lower-case unit "
                + "(ms, s, m, h, d, w), e.g. 90s or 10m")
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test(arguments: [
        ("msec", "ms"), ("milliseconds", "ms"), ("sec", "s"), ("seconds", "s"), ("min", "m"), ("minutes", "m"),
        ("hr", "h"), ("hours", "h"), ("day", "d"), ("days", "d"), ("w", "w"), ("week", "w"), ("weeks", "w"),
    ])
    func aSpelledOutUnitAfterTheNumberGetsTheShortSpellingAsAHint(word: String, unit: String) throws {
        // Given `exec --ttl 2 WORD -- true`: the shell split the duration in two
        let harness = try StrataHarness()

        let result = try harness.run(["exec", "--ttl", "2", word, "--", "true"])

        // Then nothing runs, and the hint spells that unit the way the tool reads it
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasSuffix("did you mean --ttl 2\(unit)?") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test(arguments: [
        ("7", 7), ("7b", 7), ("3k", 3_000), ("3KB", 3_000), ("3m", 3_000_000), ("3MB", 3_000_000),
        ("3g", 3_000_000_000), ("3GB", 3_000_000_000), ("3t", 3_000_000_000_000), ("3TB", 3_000_000_000_000),
        ("3KiB", 3_072), ("3MiB", 3_145_728), ("3GiB", 3_221_225_472), ("3TiB", 3_298_534_883_328),
        ("1.5M", 1_500_000), ("0.5KiB", 512),
    ])
    func everySizeUnitIsWorthItsBytes(text: String, bytes: Int) throws {
        // Given a store opened with --max-size TEXT
        let harness = try StrataHarness()

        let stats = try harness.run(["--max-size", text, "stats", "--json"])

        // Then its byte limit is that many bytes: decimal for K/M/G/T(B), binary for the -iB units
        let object = try #require(try JSONSerialization.jsonObject(with: stats.standardOutput) as? [String: Any])
        #expect(object["byteLimit"] as? Int == bytes)
    }

    @Test(arguments: [("20000000TB", "is too large"), ("3PB", "is not a size"), ("-3K", "must not be negative")])
    func aSizeOutOfRangeIsAUsageErrorWithItsReason(text: String, reason: String) throws {
        // Given a size past Int's range, with an unknown unit, or negative
        let harness = try StrataHarness()

        let result = try harness.run(["--max-size", text, "ls"])

        // Then the tool exits 2 with that reason, rather than crashing or guessing
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasPrefix("strata: option --max-size '\(text)' \(reason)") == true)
    }

    @Test func aNegativeEntryCountIsRefusedByTheToolNotByTheStore() throws {
        // Given --max-entries -1, which the disk tier would refuse too, as a store failure
        let harness = try StrataHarness()

        let result = try harness.run(["--max-entries", "-1", "ls"])

        // Then it is a usage error (2), not a store failure (3), and nothing was created
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: option --max-entries '-1' must not be negative")
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }
}
