import CacheCore
import CacheTesting
import Foundation
import Testing

/// The contract suite notices each kind of broken cache, and reports it usefully.
@Suite struct CacheContractTests {
    static let flawsAndTheRuleTheyBreak: [(FlawedCache.Flaw, CacheContract.Check)] = [
        (.ignoresInjectedClock, .usesInjectedClock),
        (.missesEverything, .roundTripPreservesValueAndExpiry),
        (.dropsExpiry, .roundTripPreservesValueAndExpiry),
        (.emptyValueIsMiss, .emptyValueIsHit),
        (.keepsFirstValue, .overwriteReplaces),
        (.removeEntryRemovesAll, .removeEntryDropsOnlyThatKey),
        (.removeAllDoesNothing, .removeAllEmpties),
        (.expiresOneTickLate, .expiryBoundary),
        (.storesExpiredEntries, .expiredEntryIsNotReturned),
        (.slidingExpiry, .readsNeverExtendExpiry),
        (.comparesKeysByScalars, .canonicallyEquivalentKeysNameOneEntry),
        (.foldsCase, .distinctKeysStaySeparate),
        (.truncatesKeys, .longKeysRoundTrip),
        (.stripsPathCharacters, .pathLikeKeysRoundTrip),
        (.forgetsAfterFiftyKeys, .concurrentSetsOnDistinctKeys),
        (.keepsExpiredEntriesWhenRead, .clockMovingBackwardsDoesNotRevive),
    ]

    @Test(arguments: flawsAndTheRuleTheyBreak)
    func reportsTheBrokenRule(_ flaw: FlawedCache.Flaw, _ check: CacheContract.Check) async throws {
        // Given a cache with one flaw, when the rule it breaks is checked, then a violation names the rule.
        let violation = await #expect(throws: ContractViolation.self) {
            try await CacheContract.verify(check) { clock in FlawedCache(flaw, clock: clock) }
        }
        #expect(violation?.check == check)
        #expect(violation?.description.hasPrefix("\(check): ") == true)
    }

    @Test func everyFlawIsCoveredByTheTable() {
        let covered = Set(Self.flawsAndTheRuleTheyBreak.map(\.0))
        #expect(covered == Set(FlawedCache.Flaw.allCases))
    }

    @Test func aThrowingCacheIsReportedWithTheOperationAndTheError() async throws {
        // Given a cache whose writes always fail
        let injected = CacheError(.outOfSpace, "disk full")
        // When the round-trip rule is checked
        let violation = await #expect(throws: ContractViolation.self) {
            try await CacheContract.verify(.roundTripPreservesValueAndExpiry) { clock in
                let cache = FaultInjectingCache<String, Data>(clock: clock)
                cache.failAlways(.setEntry, with: injected)
                return cache
            }
        }
        // Then the violation names the failing operation and carries the cache's error
        #expect(violation?.message.contains("setEntry") == true)
        #expect((violation?.underlyingError as? CacheError)?.code == .outOfSpace)
    }

    @Test func aThrowingFactoryIsReportedAsAViolationOfTheCheck() async throws {
        let violation = await #expect(throws: ContractViolation.self) {
            try await CacheContract.verify(.missOnEmptyCache) { _ in
                throw CacheError(.permissionDenied, "no directory")
            }
        }
        #expect(violation?.check == .missOnEmptyCache)
        #expect((violation?.underlyingError as? CacheError)?.code == .permissionDenied)
    }

    @Test func verifyAllReportsEveryBrokenRule() async throws {
        // A cache that never returns anything passes the rules about misses but breaks the others.
        let violations = await #expect(throws: ContractViolations.self) {
            try await CacheContract.verifyAll([.missOnEmptyCache, .emptyValueIsHit, .overwriteReplaces]) { clock in
                FlawedCache(.missesEverything, clock: clock)
            }
        }
        #expect(violations?.violations.map(\.check) == [.emptyValueIsHit, .overwriteReplaces])
    }

    @Test func violationNamesTheStepAndShowsWhatWasReturned() async throws {
        let violation = await #expect(throws: ContractViolation.self) {
            try await CacheContract.verify(.expiryBoundary) { clock in FlawedCache(.expiresOneTickLate, clock: clock) }
        }
        #expect(
            violation?.description
                == #"expiryBoundary: exactly at the expiry instant: "ttl" should miss (expected: nil (a miss); "#
                + #"actual: 11 bytes "ten seconds")"#)
    }

    @Test func wrongExpiryIsShownRelativeToTheClockStart() async throws {
        let violation = await #expect(throws: ContractViolation.self) {
            try await CacheContract.verify(.roundTripPreservesValueAndExpiry) { clock in
                FlawedCache(.dropsExpiry, clock: clock)
            }
        }
        #expect(violation?.expected == "2026-01-01 00:01:00 +0000 (start +60.0 s)")
        #expect(violation?.actual == "never")
    }

    @Test func violationDescriptionShowsExpectedAndActual() {
        let violation = ContractViolation(
            check: .expiryBoundary, message: "still returned", expected: "nil (a miss)", actual: "3 bytes")
        #expect(violation.description == "expiryBoundary: still returned (expected: nil (a miss); actual: 3 bytes)")
    }

    @Test func everyCheckHasADistinctNameAndSummary() {
        let checks = CacheContract.Check.allCases
        #expect(checks.count >= 17)
        #expect(Set(checks.map(\.description)).count == checks.count)
        #expect(Set(checks.map(\.summary)).count == checks.count)
        #expect(CacheContract.Check(rawValue: "expiryBoundary") == .expiryBoundary)
    }
}
