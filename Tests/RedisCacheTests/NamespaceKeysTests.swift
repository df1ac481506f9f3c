import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

@Suite struct NamespaceKeysTests {
    /// RFC 4648 section 10's test vectors, in base64url without the padding the key names leave out.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64URLMatchesTheRFCVectors(input: String, expected: String) {
        #expect(NamespaceKeys.base64URL(Array(input.utf8)) == Array(expected.utf8))
    }

    @Test func base64URLUsesTheURLSafeAlphabetAndAgreesWithFoundation() {
        // Given bytes whose standard base64 holds `+` and `/`, and every length of a 128-bit name's MAC.
        #expect(NamespaceKeys.base64URL([0xFB, 0xFF, 0xBF]) == Array("-_-_".utf8))
        var generator = SystemRandomNumberGenerator()
        for count in 0...48 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Then the hand-written encoder equals Foundation's base64 mapped to the URL alphabet, unpadded.
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(NamespaceKeys.base64URL(bytes) == Array(foundation.utf8), "\(bytes)")
        }
    }

    static func keys(_ byte: UInt8, namespace: String = "shared") throws -> NamespaceKeys {
        try NamespaceKeys(namespace: namespace, master: MasterKey(bytes: Data(repeating: byte, count: 32)))
    }

    @Test func aCheckRecordOfAnotherMasterKeyIsAnotherKeyNotDamage() throws {
        // Given the key-check records of two master keys
        let own = try Self.keys(1)
        let other = try Self.keys(2)
        let otherRecord = try other.makeCheckRecord()
        // Then each judges its own as matching and the other's as another master key's: the fingerprint
        // decides before the seal is tried, so the tier never rewrites (deletes) another holder's record
        #expect(try own.evaluate(checkRecord: try own.makeCheckRecord()) == .matches)
        #expect(try own.evaluate(checkRecord: otherRecord) == .otherMasterKey)
        #expect(try other.evaluate(checkRecord: try own.makeCheckRecord()) == .otherMasterKey)
    }

    @Test func aCheckRecordWithThisKeysFingerprintThatDoesNotOpenIsDamage() throws {
        let own = try Self.keys(1)
        var record = try own.makeCheckRecord()
        record[record.count - 1] ^= 0x01  // the seal's tag
        #expect(try own.evaluate(checkRecord: record) == .damaged)
        var magic = try own.makeCheckRecord()
        magic[0] ^= 0x01
        #expect(try own.evaluate(checkRecord: magic) == .damaged)
    }

    @Test func aDamagedFingerprintBeforeASealThatOpensIsDamageNotAnotherKey() throws {
        let own = try Self.keys(1)
        var record = try own.makeCheckRecord()
        record[4] ^= 0x01  // the fingerprint's first byte, after the 4-byte magic
        #expect(try own.evaluate(checkRecord: record) == .damaged)
        // Another key still reads it as another key's record, never as damage it would rewrite
        #expect(try Self.keys(2).evaluate(checkRecord: record) == .otherMasterKey)
    }

    @Test func namespacesHaveTheirOwnEpochCounterAndEntryNames() throws {
        let alpha = try Self.keys(1, namespace: "alpha")
        let bravo = try Self.keys(1, namespace: "bravo")
        #expect(alpha.epochKey == Array("strata:v2:alpha:{alpha}:epoch".utf8))
        #expect(alpha.checkKey == Array("strata:v2:alpha:{alpha}:check".utf8))
        #expect(alpha.epochKey != bravo.epochKey)
        #expect(try alpha.entryKey(for: Data("k".utf8)) != bravo.entryKey(for: Data("k".utf8)))
    }

    /// Layout v2 on a Redis Cluster: a namespace's counters (epoch, key check, every tag's version) hash to one
    /// slot, so an entry's fences are one `MGET` there too; each entry hashes by its MAC alone (between the
    /// braces), so entries spread over the slots; every name is under the one tracked prefix.
    @Test func countersShareTheNamespacesSlotAndEntriesSpreadByTheirMAC() throws {
        let keys = try Self.keys(1, namespace: "alpha")
        let slot = HashSlot(key: Array("alpha".utf8))
        #expect(HashSlot(key: keys.epochKey) == slot)
        #expect(HashSlot(key: keys.checkKey) == slot)
        for tag in ["a", "é", "user:42", ""] {
            let name = try keys.tagKey(for: tag)
            #expect(HashSlot(key: name) == slot, "\(tag)")
            #expect(name.starts(with: Array("strata:v2:alpha:{alpha}:t:".utf8)))
        }
        var entrySlots = Set<HashSlot>()
        for index in 0..<1_000 {
            let name = try keys.entryKey(for: Data("key \(index)".utf8))
            let head = Array("strata:v2:alpha:k:{".utf8)
            #expect(name.starts(with: head) && name.last == UInt8(ascii: "}") && name.count == head.count + 23)
            // the slot is the MAC's: only the 22 characters between the braces are hashed
            #expect(HashSlot(key: name) == HashSlot(key: Array(name[head.count..<(name.count - 1)])))
            #expect(RedisCache<Int, Int>.isEntryName(name, prefix: keys.prefix))
            entrySlots.insert(HashSlot(key: name))
        }
        // 1,000 MACs over 16,384 slots: about 970 distinct when spread, 1 when a tag pinned them
        #expect(entrySlots.count > 900)
        for name in [keys.epochKey, keys.checkKey, try keys.tagKey(for: "a"), try keys.entryKey(for: Data("k".utf8))] {
            #expect(name.starts(with: Array(keys.prefix.utf8)))
        }
        #expect(keys.prefix == "strata:v2:alpha:")
    }

    @Test func hundredThousandEntriesSpreadWithinThreePercentOverThreePrimaries() throws {
        // The slot ranges `redis-cli --cluster create` gives three primaries
        let ranges = [0...5_460, 5_461...10_922, 10_923...16_383]
        let keys = try Self.keys(7, namespace: "spread")
        var counts = [0, 0, 0]
        for index in 0..<100_000 {
            let slot = HashSlot(key: try keys.entryKey(for: Data("user:\(index)".utf8))).rawValue
            counts[ranges.firstIndex { $0.contains(slot) }!] += 1
        }
        // Each primary within ±3 % of its share (a third of the keys, give or take a slot's rounding)
        for (count, range) in zip(counts, ranges) {
            let share = 100_000 * Double(range.count) / Double(HashSlot.count)
            #expect(abs(Double(count) - share) <= 0.03 * share, "\(counts)")
        }
    }
}
