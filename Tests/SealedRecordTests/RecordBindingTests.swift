import Foundation
import SealedRecord
import Testing

/// The associated data each tier binds a sealed record with, byte for byte (Docs/DiskFormat.md, Docs/RedisCache.md).
@Suite struct RecordBindingTests {
    private static let header: [UInt8] = [0x53, 0x54, 0x52, 0x45, 0x01, 0x00]

    private func associatedData(_ binding: RecordBinding, header: [UInt8] = Self.header) -> [UInt8] {
        header.withUnsafeBytes { header in binding.withAssociatedData(header: header) { Array($0) } }
    }

    @Test func anEntryFileBindsTheHeaderThenTheFileName() {
        let bytes = associatedData(.entryFile(name: "ab12"))
        #expect(bytes == Self.header + [0x61, 0x62, 0x31, 0x32])
    }

    @Test func aRedisKeyBindsTheHeaderThenTheNamespaceWithItsLengthThenTheKeyName() {
        let bytes = associatedData(.redisKey(namespace: "app", name: Array("strata:v2:app:k:{Zz}".utf8)))
        #expect(bytes == Self.header + [3] + Array("app".utf8) + Array("strata:v2:app:k:{Zz}".utf8))
    }

    @Test func theLongestNamespaceHasItsFullLengthByte() {
        let namespace = String(repeating: "n", count: 255)
        let bytes = associatedData(.redisKey(namespace: namespace, name: [7]))
        #expect(bytes.count == Self.header.count + 1 + 255 + 1)
        #expect(bytes[Self.header.count] == 255)
    }

    @Test func everyPartOfTheBindingChangesTheBytes() {
        // Each of these must differ from the base, or a record moved to that place would still open.
        let base = associatedData(.redisKey(namespace: "a", name: [1, 2]))
        #expect(associatedData(.redisKey(namespace: "b", name: [1, 2])) != base)
        #expect(associatedData(.redisKey(namespace: "a", name: [1, 3])) != base)
        #expect(associatedData(.redisKey(namespace: "a", name: [1, 2]), header: [0x53]) != base)
        // "a" + key "b1" and "ab" + key "1" do not collide: the namespace's length is bound too.
        #expect(
            associatedData(.redisKey(namespace: "a", name: Array("b1".utf8)))
                != associatedData(.redisKey(namespace: "ab", name: Array("1".utf8))))
        #expect(associatedData(.entryFile(name: "x")) != associatedData(.entryFile(name: "y")))
    }

    @Test func anEmptyHeaderOrNameStillBuilds() {
        #expect(associatedData(.entryFile(name: ""), header: []) == [])
        #expect(associatedData(.redisKey(namespace: "", name: []), header: []) == [0])
    }
}
