import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
/// included, as the `Cache` protocol allows — whose canonical bytes are at most ``maximumTagLength`` bytes,
/// and an entry carries at most ``maximumTagCount`` tags. Nothing is ever truncated: a longer name or more tags
/// is refused with `CacheError` `.invalidArgument` before anything is read or written.
///
/// **A tag's canonical bytes** (``canonicalBytes(of:)``) are the UTF-8 of its Unicode NFC form, exactly as a
/// `String` key's (`CacheKey.canonicalBytes`): "é" composed and decomposed are one `String`, so they are one
/// tag in the memory tier, and they must be one tag in the tiers that name counters and write blocks by bytes.
/// Blocks hold canonical names only, and counters are named from them.
///
/// Thread safety: stateless functions over values.
package enum TagBlock {
    /// The longest tag name, in UTF-8 bytes: the largest length the 16-bit field holds.
    package static let maximumTagLength = Int(UInt16.max)
    /// The most tags one entry carries: the largest count the 16-bit field holds.
    package static let maximumTagCount = Int(UInt16.max)

    // MARK: - The tag rule

    /// The bytes `tag` is known by in every sealing tier: the UTF-8 of its Unicode NFC form, the canonical
    /// bytes of a `String` key (`CacheKey.canonicalBytes`; Unicode Standard Annex #15). Tag blocks hold these
    /// bytes, and counters (disk files, Redis keys) are named from them.
    ///
    /// - Parameter tag: Any tag.
    /// - Returns: Its canonical bytes; an ASCII tag's are its own UTF-8 bytes.
    /// - Complexity: O(*n*) in the tag's length (the normalizer runs only for a tag that is not ASCII).
    package static func canonicalBytes(of tag: String) -> Data {
        tag.canonicalBytes
    }

    /// Checks `tag` against the tag rule: at most ``maximumTagLength`` bytes in its canonical form (NFC
    /// UTF-8, what a block holds); the empty tag is valid.
    ///
    /// - Parameter tag: A tag an operation was given.
    /// - Throws: `CacheError` `.invalidArgument` naming the tag's length when it is longer.
    /// - Complexity: O(*n*) in the tag's length.
    package static func validate(_ tag: String) throws {
        // The canonical form is what is written; it may be longer than the tag as given (a few characters,
        // such as U+0958, decompose under NFC) or shorter (a decomposed "é" composes).
        let length = canonicalBytes(of: tag).count
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

    /// The block for `versions`: each tag's canonical bytes (``canonicalBytes(of:)``), in byte order of
    /// those bytes (so one set of stamps always encodes to the same bytes).
    ///
    /// - Parameter versions: Each tag the entry carries and the version it is stamped with.
    /// - Returns: The block's bytes.
    /// - Throws: `CacheError` `.invalidArgument` when `versions` breaks the tag rule (``validate(_:)``).
    /// - Complexity: O(*t* log *t*) in the number of tags plus their total length.
    package static func encode(_ versions: [String: UInt64]) throws -> Data {
        try validate(versions.keys)
        // A `[String: UInt64]` cannot hold two spellings of one tag (`String` compares them equal), so the
        // canonical names are distinct.
        let sorted = versions.map { (name: Array(canonicalBytes(of: $0.key)), version: $0.value) }
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
    /// A name that is not in canonical form (NFC) was written by a build from before tags were canonical: its
    /// version was read from a counter named by those other bytes, which no removal reaches any more. Its stamp
    /// comes back as ``FenceCounter/neverCurrent``, so the record is fenced (a miss in every tier), never
    /// served on a stamp nobody can advance. Two spellings of one tag in one block (only such a build could
    /// write them) are that case too, not a duplicate.
    ///
    /// - Parameter bytes: The value bytes of a record whose header says it carries a tag block.
    /// - Returns: The stamps and the value, or `nil` when the block runs past the bytes, holds a name that
    ///   is not UTF-8 or holds the same name bytes twice. The block was authenticated with the record, so only
    ///   a faulty writer holding the master key (or a newer format) produces one.
    /// - Complexity: O(*n*) in the block's length (plus the normalizer for names that are not ASCII); the
    ///   value is copied once.
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
        var names = Set<Data>()
        for _ in 0..<count {
            guard let length = integer(2), let name = take(Int(length)),
                let tag = exactUTF8String(name), let version = integer(8),
                names.insert(name).inserted
            else { return nil }
            // A name seen under another spelling, or not canonical itself, can never be current again.
            let isCanonical = versions[tag] == nil && canonicalBytes(of: tag) == name
            versions[tag] = isCanonical ? version : FenceCounter.neverCurrent
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
