#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A key with canonical bytes: bytes that are stable across processes, machines and releases, so a tier
/// that names entries by bytes (the disk tier's files, a Redis tier's keys) finds them again.
///
/// A tier hashes the canonical bytes (HMAC-SHA-256, RFC 2104 over SHA-256 from FIPS 180-4, under a naming
/// subkey derived with HKDF, RFC 5869) into the entry's name and stores them, encrypted, inside the entry
/// so a read can check it found the right one. Every such tier uses these same bytes, so tiers agree on
/// what one key is. They must never depend on `hashValue`, which Swift seeds per process. This protocol
/// does no I/O and no cryptography.
///
/// Conformances provided here:
/// - `String`: UTF-8 of the Unicode NFC form, so "café" composed and decomposed are one entry (and a
///   tier that lists its keys, such as `DiskCache.listEntries()`, returns the NFC form).
/// - `URL`: UTF-8 of `absoluteString` (no normalization beyond what `URL` does).
/// - `UUID`: its 16 bytes in RFC 4122 order.
/// - `Int`, `Int64`, `Int32`, `UInt64`, `UInt32`: fixed width, big-endian (`Int` as 8 bytes).
/// - `Data`: the bytes themselves.
/// - Any `Codable` type: JSON with sorted keys and unescaped slashes, every string in it (values and
///   dictionary keys) in NFC, so two `==` keys whose strings differ only in composition are one entry.
///   Declare `extension MyKey: CacheKey {}` and the default implementation applies.
///
/// ```swift
/// struct Thumbnail: Codable, Hashable, Sendable, CacheKey {
///     var photoID: UUID
///     var width: Int
/// }
/// ```
///
/// Equal keys must give equal bytes; different keys should give different bytes (two keys with equal
/// bytes share one entry). Two `URL`s that differ only in how they were built (a base URL plus a
/// relative part, or the absolute string) give equal bytes.
///
/// Thread safety: conformers are `Sendable`, and ``canonicalBytes`` is read from any thread, often from
/// the cache's I/O queue; it must not depend on mutable shared state.
public protocol CacheKey: Hashable, Sendable {
    /// The bytes that name this key in a tier: equal keys give equal bytes.
    ///
    /// - Throws: When the key cannot be encoded (for example a `Codable` key whose `encode(to:)`
    ///   throws); a tier reports it as ``CacheError/Code/invalidArgument``. Conformers
    ///   that cannot fail implement it without `throws`.
    var canonicalBytes: Data { get throws }

    /// Rebuilds a key from its canonical bytes, or returns `nil` when they are not this type's.
    ///
    /// - Parameter canonicalBytes: Bytes produced by ``canonicalBytes``.
    init?(canonicalBytes: Data)
}

extension CacheKey where Self: Codable {
    /// JSON with sorted keys and unescaped slashes, in Unicode NFC (deterministic for a given type and
    /// value; `==` keys whose strings differ only in composition give equal bytes).
    ///
    /// - Throws: What the type's `encode(to:)` throws.
    /// - Complexity: O(*m*) in the encoded size, plus sorting each object's keys.
    public var canonicalBytes: Data {
        get throws { CanonicalJSON.normalized(try CanonicalJSON.encoder.encode(self)) }
    }

    /// Decodes the JSON written by ``canonicalBytes``; `nil` when it does not decode.
    ///
    /// - Parameter canonicalBytes: JSON bytes.
    /// - Complexity: O(*m*) in the JSON's size.
    public init?(canonicalBytes: Data) {
        guard let key = try? JSONDecoder().decode(Self.self, from: canonicalBytes) else { return nil }
        self = key
    }
}

/// The one JSON configuration used for Codable keys; changing it would rename every stored entry.
enum CanonicalJSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// The JSON text in NFC. Normalizing the whole text equals normalizing each string in it: JSON's
    /// punctuation and escapes are ASCII characters that compose with no mark, so every string's first
    /// and last character stays inside its quotes; and `sortedKeys` orders keys with `String`'s `<`, which
    /// already compares canonically equivalent strings as equal.
    static func normalized(_ json: Data) -> Data {
        guard json.contains(where: { $0 >= 0x80 }), let text = String(data: json, encoding: .utf8) else {
            return json
        }
        return UnicodeNFC.utf8(of: text)
    }
}

extension String: CacheKey {
    /// UTF-8 of the Unicode NFC form (Foundation's `precomposedStringWithCanonicalMapping`; Unicode Standard
    /// Annex #15).
    ///
    /// A string whose scalars are all below U+0300 (ASCII and Latin-1 included) is its own NFC form (none of
    /// them decomposes or composes), so its bytes are taken as they are, without running the normalizer. On
    /// Linux the normalizer is loaded from libFoundation on first use, so a process whose keys never need it
    /// never loads Foundation.
    ///
    /// - Complexity: O(*n*) in the string's length.
    public var canonicalBytes: Data { UnicodeNFC.utf8(of: self) }

    /// Decodes UTF-8; `nil` when the bytes are not valid UTF-8. The result is not normalized again: bytes
    /// written by ``canonicalBytes`` are already NFC.
    ///
    /// - Parameter canonicalBytes: UTF-8 bytes.
    /// - Complexity: O(*n*) in the number of bytes.
    public init?(canonicalBytes: Data) {
        guard let string = String(data: canonicalBytes, encoding: .utf8) else { return nil }
        self = string
    }
}

extension URL: CacheKey {
    /// UTF-8 of `absoluteString`.
    ///
    /// - Complexity: O(*n*) in the string's length.
    public var canonicalBytes: Data { Data(absoluteString.utf8) }

    /// Parses the UTF-8 `absoluteString`; `nil` when it is not a URL.
    ///
    /// - Parameter canonicalBytes: UTF-8 bytes of a URL string.
    /// - Complexity: O(*n*) in the number of bytes.
    public init?(canonicalBytes: Data) {
        guard let string = String(data: canonicalBytes, encoding: .utf8), let url = URL(string: string) else {
            return nil
        }
        self = url
    }
}

extension UUID: CacheKey {
    /// The 16 bytes of the UUID, most significant first (RFC 4122 byte order).
    public var canonicalBytes: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }

    /// Rebuilds a UUID from exactly 16 bytes.
    ///
    /// - Parameter canonicalBytes: 16 bytes.
    public init?(canonicalBytes: Data) {
        guard canonicalBytes.count == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: canonicalBytes) }
        self.init(uuid: raw)
    }
}

extension Data: CacheKey {
    /// The bytes themselves (no copy: `Data` is copy-on-write).
    public var canonicalBytes: Data { self }

    /// The bytes themselves.
    ///
    /// - Parameter canonicalBytes: Any bytes.
    public init?(canonicalBytes: Data) { self = canonicalBytes }
}

/// Fixed-width integers name entries by their big-endian bytes.
protocol BigEndianCacheKey: FixedWidthInteger, CacheKey {}

extension BigEndianCacheKey {
    var bigEndianBytes: Data { withUnsafeBytes(of: bigEndian) { Data($0) } }

    static func fromBigEndian(_ bytes: Data) -> Self? {
        guard bytes.count == MemoryLayout<Self>.size else { return nil }
        var value = Self.zero
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        return Self(bigEndian: value)
    }
}

extension Int: CacheKey {
    /// 8 bytes, big-endian two's complement (the same on 32- and 64-bit platforms).
    public var canonicalBytes: Data { Int64(self).bigEndianBytes }

    /// Rebuilds the value from 8 big-endian bytes; `nil` for other lengths or out-of-range values.
    ///
    /// - Parameter canonicalBytes: 8 bytes.
    public init?(canonicalBytes: Data) {
        guard let wide = Int64.fromBigEndian(canonicalBytes), let value = Int(exactly: wide) else { return nil }
        self = value
    }
}

extension Int64: CacheKey, BigEndianCacheKey {
    /// 8 bytes, big-endian two's complement.
    public var canonicalBytes: Data { bigEndianBytes }
    /// Rebuilds the value from 8 big-endian bytes.
    ///
    /// - Parameter canonicalBytes: 8 bytes.
    public init?(canonicalBytes: Data) {
        guard let value = Self.fromBigEndian(canonicalBytes) else { return nil }
        self = value
    }
}

extension Int32: CacheKey, BigEndianCacheKey {
    /// 4 bytes, big-endian two's complement.
    public var canonicalBytes: Data { bigEndianBytes }
    /// Rebuilds the value from 4 big-endian bytes.
    ///
    /// - Parameter canonicalBytes: 4 bytes.
    public init?(canonicalBytes: Data) {
        guard let value = Self.fromBigEndian(canonicalBytes) else { return nil }
        self = value
    }
}

extension UInt64: CacheKey, BigEndianCacheKey {
    /// 8 bytes, big-endian.
    public var canonicalBytes: Data { bigEndianBytes }
    /// Rebuilds the value from 8 big-endian bytes.
    ///
    /// - Parameter canonicalBytes: 8 bytes.
    public init?(canonicalBytes: Data) {
        guard let value = Self.fromBigEndian(canonicalBytes) else { return nil }
        self = value
    }
}

extension UInt32: CacheKey, BigEndianCacheKey {
    /// 4 bytes, big-endian.
    public var canonicalBytes: Data { bigEndianBytes }
    /// Rebuilds the value from 4 big-endian bytes.
    ///
    /// - Parameter canonicalBytes: 4 bytes.
    public init?(canonicalBytes: Data) {
        guard let value = Self.fromBigEndian(canonicalBytes) else { return nil }
        self = value
    }
}
