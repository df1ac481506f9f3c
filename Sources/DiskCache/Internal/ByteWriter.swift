#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
}
