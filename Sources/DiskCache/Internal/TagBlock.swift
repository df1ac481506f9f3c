import CacheCore
import Foundation

/// The tag block that starts the value bytes of a tagged record (``EntryRecord/flagHasTags``), inside the
/// ciphertext, so tag names are as secret as values and their stamped versions are authenticated with the
/// record: a 16-bit count, then per tag its UTF-8 length (16 bits), its bytes and the version it was stamped
/// with (64 bits), all big-endian, tags in byte order of their names. Docs/DiskFormat.md, "Tag block".
enum TagBlock {
    /// The longest tag name the block holds, in UTF-8 bytes.
    static let maximumTagLength = Int(UInt16.max)
    /// The most tags one entry carries.
    static let maximumTagCount = Int(UInt16.max)

    /// The block for `versions`.
    ///
    /// - Throws: `CacheError` `.invalidArgument` for an empty tag, a tag over ``maximumTagLength`` bytes or
    ///   more than ``maximumTagCount`` tags.
    static func encode(_ versions: [String: UInt64]) throws -> Data {
        guard versions.count <= maximumTagCount else {
            throw CacheError(.invalidArgument, "an entry carries at most \(maximumTagCount) tags")
        }
        var block = Data()
        append(UInt16(versions.count), to: &block)
        for (tag, version) in versions.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes($1.key.utf8) }) {
            let bytes = Array(tag.utf8)
            guard !bytes.isEmpty, bytes.count <= maximumTagLength else {
                throw CacheError(.invalidArgument, "a tag must be 1 to \(maximumTagLength) bytes of UTF-8")
            }
            append(UInt16(bytes.count), to: &block)
            block.append(contentsOf: bytes)
            append(version, to: &block)
        }
        return block
    }

    /// Splits opened value bytes into the block's tags and versions and the value proper; `nil` when the
    /// block is malformed (it was authenticated, so only a writer's bug or a newer format makes it so).
    static func split(_ bytes: Data) -> (versions: [String: UInt64], value: Data)? {
        var offset = bytes.startIndex
        func take(_ count: Int) -> Data? {
            guard count <= bytes.endIndex - offset else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
        func integer(_ count: Int) -> UInt64? {
            take(count)?.reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard let count = integer(2) else { return nil }
        var versions: [String: UInt64] = [:]
        for _ in 0..<count {
            guard let length = integer(2), length > 0, let name = take(Int(length)),
                let tag = String(bytes: name, encoding: .utf8), let version = integer(8),
                versions.updateValue(version, forKey: tag) == nil
            else { return nil }
        }
        return (versions, Data(bytes[offset...]))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}
