#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `exec` keeps for one run: its exit status, its outputs, and when it stops being fresh.
///
/// Serialized as (all integers big-endian): the magic `SXR1`, the exit status (Int32), a flag byte
/// (1 when a freshness instant follows), the instant as Float64 seconds since 1970, the stdout length
/// (UInt64) and bytes, the stderr length (UInt64) and bytes. The store's own expiry is the freshness
/// instant plus the `--stale` window, so the store drops the record once it cannot be served at all.
struct ExecRecord: Equatable {
    private static let magic = Data("SXR1".utf8)

    /// The command's exit status (128 + signal number when a signal ended it).
    var status: Int32
    /// Until when the result is fresh; `nil` for always.
    var freshUntil: Date?
    /// Everything the command wrote to standard output.
    var standardOutput: Data
    /// Everything the command wrote to standard error.
    var standardError: Data

    /// The serialized record of a run, built in `standardOutput`'s own buffer when the caller gives up its
    /// last reference to it: the header is inserted in front (the bytes move within the buffer, which
    /// `realloc` grows in place or by remapping) and stderr appended, so a large stdout is not copied.
    ///
    /// - Parameters:
    ///   - status: The exit status.
    ///   - freshUntil: Until when the result is fresh; `nil` for always.
    ///   - standardOutput: What the command wrote to stdout.
    ///   - standardError: What the command wrote to stderr.
    /// - Returns: The bytes ``init(serialized:)`` reads.
    /// - Complexity: O(stdout + stderr) bytes moved.
    static func serialize(
        status: Int32, freshUntil: Date?, standardOutput: consuming Data, standardError: Data
    ) -> Data {
        var header = magic
        append(UInt32(bitPattern: status), to: &header)
        if let freshUntil {
            header.append(1)
            append(freshUntil.timeIntervalSince1970.bitPattern, to: &header)
        } else {
            header.append(0)
        }
        append(UInt64(standardOutput.count), to: &header)
        var data = consume standardOutput
        data.replaceSubrange(data.startIndex..<data.startIndex, with: header)
        append(UInt64(standardError.count), to: &data)
        data.append(standardError)
        return data
    }

    /// A record with the given fields.
    init(status: Int32, freshUntil: Date?, standardOutput: Data, standardError: Data) {
        self.status = status
        self.freshUntil = freshUntil
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// Parses a serialized record.
    ///
    /// - Parameter data: Bytes written by ``serialize(status:freshUntil:standardOutput:standardError:)``.
    /// - Returns: The record, or `nil` when the bytes are not a record (treated as a miss).
    init?(serialized data: Data) {
        var reader = ByteReader(data: data)
        guard reader.take(4) == Self.magic, let status = reader.integer(UInt32.self), let flag = reader.take(1)
        else { return nil }
        self.status = Int32(bitPattern: status)
        if flag.first == 1 {
            guard let bits = reader.integer(UInt64.self) else { return nil }
            self.freshUntil = Date(timeIntervalSince1970: Double(bitPattern: bits))
        } else {
            self.freshUntil = nil
        }
        guard let outCount = reader.integer(UInt64.self), let out = reader.take(outCount),
            let errCount = reader.integer(UInt64.self), let err = reader.take(errCount), reader.isAtEnd
        else { return nil }
        self.standardOutput = out
        self.standardError = err
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}

/// Reads big-endian integers and byte runs from a `Data`, never past its end.
private struct ByteReader {
    var data: Data
    var offset = 0

    var isAtEnd: Bool { offset == data.count }

    mutating func take<Count: BinaryInteger>(_ count: Count) -> Data? {
        guard count >= 0, UInt64(count) <= UInt64(data.count - offset) else { return nil }
        let start = data.startIndex + offset
        offset += Int(count)
        // A slice shares the record's buffer: replaying a large output costs no second copy of it.
        return data[start..<(start + Int(count))]
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T? {
        guard let bytes = take(MemoryLayout<T>.size) else { return nil }
        return bytes.reduce(T(0)) { ($0 << 8) | T($1) }
    }
}
