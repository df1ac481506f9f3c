import CacheCore
import Foundation

/// Turns a ``RedisCache``'s values into bytes and back.
///
/// The bytes are what gets sealed; the codec never sees Redis. A codec that throws makes the call fail
/// with `CacheError.Code.codec`; a write then leaves the stored entry as it was.
///
/// ```swift
/// let cache = try RedisCache<String, Profile>(configuration: configuration, codec: .json())
/// ```
///
/// Thread safety: a plain value holding two `@Sendable` functions; the cache calls them from any task,
/// concurrently. Encoding and decoding cost O(*m*) in the value's encoded size with the codecs provided
/// here.
public struct RedisValueCodec<Value>: Sendable {
    /// Encodes a value; may throw (the write then fails with `CacheError.Code.codec`).
    public var encode: @Sendable (Value) throws -> Data
    /// Decodes bytes written by ``encode``; may throw (the read then fails with `CacheError.Code.codec`).
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

extension RedisValueCodec where Value == Data {
    /// Stores `Data` unchanged; neither function throws or copies.
    public static var data: RedisValueCodec<Data> { RedisValueCodec(encode: { $0 }, decode: { $0 }) }
}

extension RedisValueCodec where Value: Codable & Sendable {
    /// Encodes values as JSON with `JSONEncoder` and decodes them with `JSONDecoder`, default settings.
    ///
    /// - Returns: A JSON codec for `Value`; each call makes a fresh encoder or decoder.
    /// - Complexity: O(1) to make; encoding and decoding are O(*m*) in the JSON's size.
    public static func json() -> RedisValueCodec<Value> {
        RedisValueCodec(
            encode: { try JSONEncoder().encode($0) },
            decode: { try JSONDecoder().decode(Value.self, from: $0) }
        )
    }

    /// Encodes values as binary property lists.
    ///
    /// - Returns: A property-list codec for `Value`; each call makes a fresh encoder or decoder.
    /// - Complexity: O(1) to make; encoding and decoding are O(*m*) in the encoded size.
    public static func propertyList() -> RedisValueCodec<Value> {
        RedisValueCodec(
            encode: { value in
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .binary
                return try encoder.encode(value)
            },
            decode: { try PropertyListDecoder().decode(Value.self, from: $0) }
        )
    }
}
