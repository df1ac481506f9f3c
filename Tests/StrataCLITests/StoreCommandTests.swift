import Foundation
import Testing

/// `ls`, `stats`, `clear`, `trim` and `verify`, driven through the built binary.
@Suite(.serialized)
struct StoreCommandTests {
    @Test func verifyRemovesOnlyTheEntryWithAFlippedByte() throws {
        // Given two entries of clearly different sizes
        let harness = try StrataHarness()
        let small = Data(repeating: 0x61, count: 3_000)
        let large = Data(repeating: 0x62, count: 60_000)
        #expect(try harness.run(["set", "small"], stdin: small).status == 0)
        #expect(try harness.run(["set", "large"], stdin: large).status == 0)

        // When one byte in the middle of the large entry's file is flipped
        let file = try #require(Self.files(under: harness.store).first { (60_000..<62_000).contains($0.size) })
        var bytes = try Data(contentsOf: file.url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: file.url)

        // Then verify reports and removes it, exits 1, and the other entry is intact
        let verify = try harness.run(["verify"])
        #expect(verify.status == 1)
        #expect(verify.outputText.contains("removed 1 bad"))
        #expect(verify.outputText.split(separator: "\n").filter { $0.hasPrefix("removed /") }.count == 1)
        #expect(try harness.run(["get", "large"]).status == 1)
        #expect(try harness.run(["get", "small"]).standardOutput == small)
        // And a second verify finds nothing wrong
        #expect(try harness.run(["verify"]).status == 0)
    }

    @Test func listShowsKeysSizesAndExpiryAsTextAndJSON() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "forever", "12345"]).status == 0)
        #expect(try harness.run(["set", "brief", "x", "--ttl", "1h"]).status == 0)
        #expect(try harness.run(["exec", "--", "printf", "%s", "a b"]).status == 0)

        let text = try harness.run(["ls"])
        #expect(text.status == 0)
        let lines = text.outputText.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.contains { $0.hasSuffix("  forever") && $0.contains("never") })
        #expect(lines.contains { $0.contains("exec: printf %s 'a b' (in ") })

        let json = try harness.run(["ls", "--json"])
        let objects = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [[String: Any]])
        #expect(objects.count == 3)
        let exec = try #require(objects.first { $0["kind"] as? String == "exec" })
        #expect(exec["argv"] as? [String] == ["printf", "%s", "a b"])
        let brief = try #require(objects.first { $0["key"] as? String == "brief" })
        #expect(brief["expiresAt"] is String)
        let forever = try #require(objects.first { $0["key"] as? String == "forever" })
        #expect(forever["expiresAt"] is NSNull)
    }

    @Test func statsCountsEntriesHitsAndMissesAcrossProcesses() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "a", "1"]).status == 0)
        #expect(try harness.run(["get", "a"]).status == 0)
        #expect(try harness.run(["get", "nope"]).status == 1)

        let stats = try harness.run(["stats", "--json", "--max-entries", "100", "--max-size", "2GiB"])
        #expect(stats.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: stats.standardOutput) as? [String: Any])
        #expect(object["count"] as? Int == 1)
        #expect(object["hits"] as? Int == 1)
        #expect(object["misses"] as? Int == 1)
        #expect(object["countLimit"] as? Int == 100)
        #expect(object["byteLimit"] as? Int == 2 * 1024 * 1024 * 1024)
        #expect(try harness.run(["stats"]).outputText.contains("max size         none"))
    }

    @Test func hitRatioOfAStoreWithNoLookUpsIsNotAvailableRatherThanZero() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "a", "1"]).status == 0)
        #expect(try harness.run(["stats"]).outputText.contains("hit ratio        n/a\n"))
        let fresh = try harness.run(["stats", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: fresh.standardOutput) as? [String: Any])
        #expect(object["hitRatio"] is NSNull)

        // One miss: a real ratio of 0 from then on.
        #expect(try harness.run(["get", "nope"]).status == 1)
        #expect(try harness.run(["stats"]).outputText.contains("hit ratio        0.000\n"))
    }

    @Test func clearRemovesEveryEntry() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "a", "1"]).status == 0)
        #expect(try harness.run(["exec", "--", "true"]).status == 0)
        #expect(try harness.run(["clear"]).status == 0)
        #expect(try harness.run(["get", "a"]).status == 1)
        #expect(try harness.run(["ls"]).standardOutput.isEmpty)
    }

    @Test func trimEvictsDownToTheEntryLimit() throws {
        let harness = try StrataHarness()
        for index in 0..<5 { #expect(try harness.run(["set", "k\(index)", "v"]).status == 0) }
        let trim = try harness.run(["trim", "--max-entries", "2"])
        #expect(trim.status == 0)
        let remaining = try harness.run(["ls"]).outputText.split(separator: "\n")
        // Down to the low-water mark (80 % of 2, rounded down: 1), and the evictions are the ones counted
        #expect(remaining.count == 1)
        #expect(trim.outputText == "removed 0 expired, evicted 4\n")
    }

    @Test func readCommandsNeverEvictBecauseOfALimitAndWritesApplyIt() throws {
        // Given five entries stored without limits
        let harness = try StrataHarness()
        for index in 0..<5 { #expect(try harness.run(["set", "k\(index)", "v"]).status == 0) }

        // When read commands run with an entry limit of 1
        #expect(try harness.run(["--max-entries", "1", "get", "k0"]).outputText == "v")
        #expect(try harness.run(["--max-entries", "1", "ls"]).outputText.split(separator: "\n").count == 5)
        let stats = try harness.run(["--max-entries", "1", "stats"]).outputText

        // Then every entry is still there and stats shows the limit it was given
        let limitLine = stats.split(separator: "\n").first { $0.hasPrefix("max entries") }
        #expect(limitLine?.split(separator: " ").last == "1")
        #expect(try harness.run(["ls"]).outputText.split(separator: "\n").count == 5)

        // And a write with that limit applies it
        #expect(try harness.run(["--max-entries", "1", "set", "k5", "w"]).status == 0)
        #expect(try harness.run(["ls"]).outputText.split(separator: "\n").count <= 1)
    }

    private static func files(under directory: URL) -> [(url: URL, size: Int)] {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            return []
        }
        return enumerator.compactMap { item in
            guard let url = item as? URL,
                let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int
            else { return nil }
            return (url, size)
        }
    }
}
