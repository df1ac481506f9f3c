import Foundation

/// Big-endian integer helpers for the on-disk formats.
extension Data {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// Reads a big-endian integer at `offset` from the start of the data (not from `startIndex`).
    func readBigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value = T.zero
        let start = startIndex + offset
        Swift.withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: self[start..<start + MemoryLayout<T>.size]) }
        return T(bigEndian: value)
    }

    /// The bytes at `offset..<offset + count`, counted from the start, as a new zero-based `Data`.
    func bytes(at offset: Int, count: Int) -> Data {
        Data(self[(startIndex + offset)..<(startIndex + offset + count)])
    }

    /// The bytes at `offset..<offset + count`, counted from the start, sharing storage (no copy); the
    /// result's indices do not start at 0, so use it only with APIs that go through `withUnsafeBytes`.
    func slice(at offset: Int, count: Int) -> Data {
        self[(startIndex + offset)..<(startIndex + offset + count)]
    }

    /// Lower-case hexadecimal.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
