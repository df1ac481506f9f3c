#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns a tier's values into bytes and back: the one codec type of every tier that stores bytes
/// (`DiskCache`, `RedisCache`).
///
/// The bytes are what the tier encrypts; the codec never sees the file or the server. A codec that
/// throws makes the call fail with ``CacheError/Code/codec`` and leaves the stored entry as it was.
///
/// `DiskCache<String, Profile>(configuration: configuration, codec: .json())` stores `Codable` values
/// as JSON; ``data`` passes `Data` through unchanged.
///
/// Thread safety: a plain value holding two `@Sendable` functions; the cache calls them from any thread,
/// concurrently, outside its lock. Encoding and decoding cost O(*m*) in the value's encoded size with the
/// codecs provided here.
public struct ValueCodec<Value>: Sendable {
    /// Encodes a value; may throw (the write then fails with ``CacheError/Code/codec``).
    public var encode: @Sendable (Value) throws -> Data
    /// Decodes bytes written by ``encode``; may throw (the read then fails with
    /// ``CacheError/Code/codec`` and the file is kept).
    public var decode: @Sendable (Data) throws -> Value

    /// Creates a codec from two functions.
    ///
    /// - Parameters:
    ///   - encode: Turns a value into bytes. Must be safe to call from any thread.
    ///   - decode: Turns bytes from `encode` back into a value. Must be safe to call from any thread.
    public init(
        encode: @escaping @Sendable (Value) throws -> Data,
        decode: @escaping @Sendable (Data) throws -> Value
    ) {
        self.encode = encode
        self.decode = decode
    }
}

extension ValueCodec where Value == Data {
    /// Stores `Data` unchanged; neither function throws or copies.
    public static var data: ValueCodec<Data> { ValueCodec(encode: { $0 }, decode: { $0 }) }
}

extension ValueCodec where Value: Codable & Sendable {
    /// Encodes values as JSON with `JSONEncoder` and decodes them with `JSONDecoder`, both with their
    /// default settings (so the encoded bytes of one value may change between Foundation versions; only
    /// decodability matters here).
    ///
    /// - Returns: A JSON codec for `Value`; each call to its functions makes a fresh encoder or decoder.
    /// - Complexity: O(1) to make; encoding and decoding are O(*m*) in the JSON's size.
    public static func json() -> ValueCodec<Value> {
        ValueCodec(
            encode: { try JSONEncoder().encode($0) },
            decode: { try JSONDecoder().decode(Value.self, from: $0) }
        )
    }

    /// Encodes values as binary property lists (smaller and faster to parse than JSON for numbers and
    /// `Data`).
    ///
    /// - Returns: A property-list codec for `Value`; each call to its functions makes a fresh encoder or
    ///   decoder.
    /// - Complexity: O(1) to make; encoding and decoding are O(*m*) in the encoded size.
    public static func propertyList() -> ValueCodec<Value> {
        ValueCodec(
            encode: { value in
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .binary
                return try encoder.encode(value)
            },
            decode: { try PropertyListDecoder().decode(Value.self, from: $0) }
        )
    }
}
