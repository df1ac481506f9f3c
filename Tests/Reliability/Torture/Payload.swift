import Foundation
import StrataTestSupport

/// Self-verifying cache values: every byte is derived from the key and a version, so any reader can tell a
/// right value from a stale, foreign or damaged one without asking the writer.
///
/// Layout (little-endian): `"STRV"` magic, version (8 bytes), key length (2 bytes), key UTF-8, body length
/// (4 bytes), body. The body is a SplitMix64 stream seeded with FNV-1a-64 of `"key|version"`: not
/// cryptographic, only reproducible.
enum Payload {
    /// What a reader found when it checked a value against the key it asked for.
    enum Verdict: Equatable {
        /// The value is exactly the one written for this key at `version`.
        case valid(version: UInt64)
        /// The value is not any value ever written for this key (why says what broke).
        case invalid(why: String)
    }

    private static let magic: [UInt8] = Array("STRV".utf8)
    private static let maxBodyLength = 16 << 20

    /// Builds the value for `key` at `version` with a body of `length` bytes.
    static func make(key: String, version: UInt64, length: Int) -> Data {
        let keyBytes = Array(key.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + 8 + 2 + keyBytes.count + 4 + length)
        bytes += magic
        append(version, byteCount: 8, to: &bytes)
        append(UInt64(keyBytes.count), byteCount: 2, to: &bytes)
        bytes += keyBytes
        append(UInt64(length), byteCount: 4, to: &bytes)
        bytes += body(key: key, version: version, length: length)
        return Data(bytes)
    }

    /// A body length between 0 and `maximum` that depends only on key and version, so writers agree.
    static func length(key: String, version: UInt64, maximum: Int) -> Int {
        Int(seed(key: key, version: version) % UInt64(maximum + 1))
    }

    /// Checks `data` against `expectedKey`: right magic, right key, and every body byte regenerated.
    static func verify(_ data: Data, expectedKey: String) -> Verdict {
        let bytes = [UInt8](data)
        let keyBytes = Array(expectedKey.utf8)
        let headerLength = 4 + 8 + 2
        guard bytes.count >= headerLength, Array(bytes[0..<4]) == magic else {
            return .invalid(why: "no payload magic (\(bytes.count) bytes)")
        }
        let version = read(bytes, at: 4, byteCount: 8)
        let keyLength = Int(read(bytes, at: 12, byteCount: 2))
        guard bytes.count >= headerLength + keyLength + 4 else { return .invalid(why: "truncated header") }
        let storedKey = Array(bytes[headerLength..<(headerLength + keyLength)])
        guard storedKey == keyBytes else {
            return .invalid(why: "value of key \(String(decoding: storedKey, as: UTF8.self)) returned")
        }
        let bodyStart = headerLength + keyLength + 4
        let bodyLength = Int(read(bytes, at: headerLength + keyLength, byteCount: 4))
        guard bodyLength <= maxBodyLength, bytes.count == bodyStart + bodyLength else {
            return .invalid(why: "length \(bytes.count) does not match header body length \(bodyLength)")
        }
        guard Array(bytes[bodyStart...]) == body(key: expectedKey, version: version, length: bodyLength) else {
            return .invalid(why: "body differs from the one derived from key and version \(version)")
        }
        return .valid(version: version)
    }

    // MARK: - Derivation

    private static func seed(key: String, version: UInt64) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a 64-bit offset basis
        for byte in "\(key)|\(version)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3  // FNV-1a 64-bit prime
        }
        return hash
    }

    private static func body(key: String, version: UInt64, length: Int) -> [UInt8] {
        var generator = SplitMix64(seed: seed(key: key, version: version))
        var out = [UInt8](repeating: 0, count: length)
        var index = 0
        while index < length {
            var word = generator.next()
            for _ in 0..<8 where index < length {
                out[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return out
    }

    private static func append(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for shift in 0..<byteCount { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift)))) }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, byteCount: Int) -> UInt64 {
        var value: UInt64 = 0
        for shift in 0..<byteCount { value |= UInt64(bytes[offset + shift]) << (8 * UInt64(shift)) }
        return value
    }
}
