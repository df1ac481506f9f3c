import Foundation
import Testing

/// Argument checks that a later layer would half catch: each test pins the tool's own refusal (status 2 and
/// its message), so removing the check fails here even where the store would refuse the command too.
@Suite(.serialized)
struct ArgumentCheckTests {
    @Test(arguments: [["set", "", "v"], ["get", ""], ["rm", ""]])
    func anEmptyKeyIsAUsageError(arguments: [String]) throws {
        // Given a command naming the empty key
        let harness = try StrataHarness()

        let result = try harness.run(arguments)

        // Then the tool refuses it itself, before opening the store
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: the key must not be empty")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata \(arguments[0])") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test(arguments: [["set", "exec:x", "v"], ["get", "exec:x"]])
    func aReservedKeyIsAUsageErrorWhateverTheMasterKey(arguments: [String]) throws {
        // Given a malformed STRATA_MASTER_KEY, which would fail the store's opening with status 3
        let harness = try StrataHarness()

        // When set or get names a key in exec's namespace
        let result = try harness.run(arguments, key: "abc")

        // Then the key is refused first, as a usage error, and no store is made
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: keys starting with 'exec:' are reserved for exec")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata \(arguments[0])") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func removingAKeyAndATagAtOnceIsRefusedAndRemovesNothing() throws {
        // Given an entry stored under a tag
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v", "--tag", "t"]).status == 0)

        // When `rm` is given both the key and the tag
        let result = try harness.run(["rm", "k", "--tag", "t"])

        // Then it is a usage error saying so, and the entry is still there
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: rm takes a KEY or --tag, not both")
        #expect(try harness.run(["get", "k"]).outputText == "v")
    }

    @Test func exitStatusesTellAMissFromAUsageErrorFromAStoreFailure() throws {
        // Given a store holding one key
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v"]).status == 0)

        // Then a hit is 0, a miss 1, a malformed command line 2 and a wrong master key 3
        #expect(try harness.run(["get", "k"]).status == 0)
        #expect(try harness.run(["get", "other"]).status == 1)
        #expect(try harness.run(["get", "k", "extra"]).status == 2)
        #expect(try harness.run(["get", "k"], key: StrataHarness.randomKey()).status == 3)
    }
}
