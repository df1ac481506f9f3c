import CacheCore
import Foundation

/// The tag block of a sealed record: the tags an entry carries and the version each was stamped with,
/// written at the start of the record's value bytes, inside the ciphertext, by every tier that seals
/// records (DiskCache's entry files, RedisCache's envelopes).
///
/// ```
/// offset  size  field
///      0     2  tag count n, UInt16 big-endian
///      2        n times, in byte order of the tags' UTF-8 names:
///                 2  name length l, UInt16 big-endian (0 for the empty tag)
///                 l  the name's UTF-8 bytes
///                 8  the stamped version, UInt64 big-endian
/// ```
///
/// Docs/DiskFormat.md ("Tag block") and Docs/RedisCache.md ("The envelope") cite this layout; both tiers
/// wrote it before the kernel existed (the Redis tier in another order, which reading does not depend on),
/// so records written by earlier builds decode unchanged.
///
/// **The tag rule** (``validate(_:)``), one for every sealing tier: a tag is any string — the empty one
/// included, as the `Cache` protocol allows — whose UTF-8 form is at most ``maximumTagLength`` bytes, and an
/// entry carries at most ``maximumTagCount`` tags. Nothing is ever truncated: a longer name or more tags is
/// refused with `CacheError` `.invalidArgument` before anything is read or written.
///
/// Thread safety: stateless functions over values.
package enum TagBlock {
    /// The longest tag name, in UTF-8 bytes: the largest length the 16-bit field holds.
    package static let maximumTagLength = Int(UInt16.max)
    /// The most tags one entry carries: the largest count the 16-bit field holds.
    package static let maximumTagCount = Int(UInt16.max)

    // MARK: - The tag rule

    /// Checks `tag` against the tag rule: at most ``maximumTagLength`` bytes of UTF-8; the empty tag is valid.
    ///
    /// - Parameter tag: A tag an operation was given.
    /// - Throws: `CacheError` `.invalidArgument` naming the tag's length when it is longer.
    /// - Complexity: O(1) for native strings (their UTF-8 count is stored); O(*n*) for bridged ones.
    package static func validate(_ tag: String) throws {
        let length = tag.utf8.count
        guard length <= maximumTagLength else {
            throw CacheError(
                .invalidArgument,
                "a tag of \(length) bytes of UTF-8 exceeds the limit of \(maximumTagLength) bytes; nothing was changed")
        }
    }

    /// Checks every tag of `tags` (``validate(_:)``) and their count (at most ``maximumTagCount``).
    ///
    /// - Parameter tags: The tags an entry carries or an operation was given.
    /// - Throws: `CacheError` `.invalidArgument` for a tag over the length limit or too many tags.
    /// - Complexity: O(*t*) in the number of tags.
    package static func validate(_ tags: some Collection<String>) throws {
        guard tags.count <= maximumTagCount else {
            throw CacheError(
                .invalidArgument,
                "an entry carries at most \(maximumTagCount) tags, not \(tags.count); nothing was changed")
        }
        for tag in tags { try validate(tag) }
    }

    // MARK: - Encoding and decoding

    /// The block for `versions`, tags in byte order of their UTF-8 names (so one set of stamps always
    /// encodes to the same bytes).
    ///
    /// - Parameter versions: Each tag the entry carries and the version it is stamped with.
    /// - Returns: The block's bytes.
    /// - Throws: `CacheError` `.invalidArgument` when `versions` breaks the tag rule (``validate(_:)``).
    /// - Complexity: O(*t* log *t*) in the number of tags plus their total length.
    package static func encode(_ versions: [String: UInt64]) throws -> Data {
        try validate(versions.keys)
        let sorted = versions.map { (name: Array($0.key.utf8), version: $0.value) }
            .sorted { $0.name.lexicographicallyPrecedes($1.name) }
        var block = Data(capacity: 2 + sorted.reduce(0) { $0 + 10 + $1.name.count })
        append(UInt16(sorted.count), to: &block)
        for (name, version) in sorted {
            append(UInt16(name.count), to: &block)
            block.append(contentsOf: name)
            append(version, to: &block)
        }
        return block
    }

    /// Splits opened value bytes into the block's tags with their stamped versions, and the value proper.
    ///
    /// - Parameter bytes: The value bytes of a record whose header says it carries a tag block.
    /// - Returns: The stamps and the value, or `nil` when the block runs past the bytes, holds a name that
    ///   is not UTF-8 or names one tag twice. The block was authenticated with the record, so only a faulty
    ///   writer holding the master key (or a newer format) produces one.
    /// - Complexity: O(*n*) in the block's length; the value is copied once.
    package static func decode(_ bytes: Data) -> (versions: [String: UInt64], value: Data)? {
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
            guard let length = integer(2), let name = take(Int(length)),
                let tag = exactUTF8String(name), let version = integer(8),
                versions.updateValue(version, forKey: tag) == nil
            else { return nil }
        }
        return (versions, Data(bytes[offset...]))
    }

    /// The string whose UTF-8 is exactly `bytes`, or `nil` when they are not valid UTF-8.
    // Not Foundation's `String(bytes:encoding: .utf8)`: on Linux it drops a leading U+FEFF, so a tag
    // "\u{FEFF}x" read back as "x" (a removal of the real tag missed it, and a block with both tags decoded
    // as a duplicate). `String(validating:as:)` needs macOS 15 / iOS 18; decoding with repair and comparing
    // the bytes back refuses invalid UTF-8 and keeps every scalar.
    private static func exactUTF8String(_ bytes: Data) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        return string.utf8.elementsEqual(bytes) ? string : nil
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}
