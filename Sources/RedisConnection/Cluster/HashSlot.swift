/// One of the 16,384 hash slots of a Redis Cluster: the unit the cluster assigns to primaries and moves
/// between them.
///
/// A key's slot is CRC16 of its bytes modulo 16,384, with hash tags: when the key holds a `{`, a `}`
/// somewhere after it, and at least one byte between the first `{` and that next `}`, only the bytes
/// between them are hashed, so `user:{42}:name` and `user:{42}:mail` share a slot. Any other key, `{}`
/// included, hashes whole. The checksum is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
/// reflection, no final XOR; CRC16 of `123456789` is 0x31C3). Source: Redis Cluster specification, "Key
/// distribution model" and "Hash tags" (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/),
/// checked against the server's `CLUSTER KEYSLOT` in the tests.
///
/// ```swift
/// let slot = HashSlot(key: Array("user:{42}:name".utf8))
/// assert(slot == HashSlot(key: Array("42".utf8)))
/// ```
///
/// Thread safety: a value type; `Sendable`.
package struct HashSlot: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number of slots in a cluster: 16,384.
    package static let count = 16_384

    /// The slot's number, in `0..<16384`.
    package let rawValue: Int

    /// Creates the slot numbered `rawValue`, or `nil` outside `0..<16384`.
    ///
    /// - Parameter rawValue: The slot's number, as `CLUSTER SHARDS` or a `MOVED` reply gives it.
    package init?(rawValue: Int) {
        guard (0..<Self.count).contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// The slot the cluster stores `key` in, as the server's `CLUSTER KEYSLOT` computes it.
    ///
    /// - Parameter key: The key's bytes (binary-safe).
    /// - Complexity: O(n) in the key's length.
    package init(key: [UInt8]) {
        rawValue = key.withUnsafeBufferPointer { Int(Self.crc16(Self.hashedPart(of: $0)) & 0x3FFF) }
    }

    /// The slot of `key`'s UTF-8 bytes.
    ///
    /// - Parameter key: The key.
    /// - Complexity: O(n) in the key's length.
    package init(key: String) {
        self.init(key: Array(key.utf8))
    }

    /// The slot's number.
    package var description: String { String(rawValue) }

    /// Orders slots by number.
    package static func < (lhs: HashSlot, rhs: HashSlot) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The bytes that decide the slot: the hash tag's contents when the key has a non-empty one (between the
    /// first `{` and the next `}`), else the whole key.
    static func hashedPart(of key: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")) else { return key }
        let rest = UnsafeBufferPointer(rebasing: key[(open + 1)...])
        // An empty tag (`{}`) or a `{` without a later `}` hashes the whole key, as the server does.
        guard let close = rest.firstIndex(of: UInt8(ascii: "}")), close > rest.startIndex else { return key }
        return UnsafeBufferPointer(rebasing: rest[..<close])
    }

    /// CRC-16/XMODEM of `bytes`, one table lookup per byte.
    ///
    /// - Parameter bytes: The bytes to check.
    /// - Returns: The 16-bit checksum.
    /// - Complexity: O(n) in the number of bytes.
    package static func crc16(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
            }
        }
        return crc
    }

    /// The checksum of every byte value run through eight shifts of the polynomial 0x1021, built once so
    /// hashing costs one lookup per byte instead of eight conditional shifts.
    private static let table: [UInt16] = (0...255).map { value in
        var crc = UInt16(value) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
