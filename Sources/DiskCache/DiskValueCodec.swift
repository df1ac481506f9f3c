import CacheCore
import Foundation

/// Turns a ``DiskCache``'s values into bytes and back.
///
/// The bytes are what gets encrypted; the codec never sees the disk. A codec that throws makes the
/// call fail with ``CacheCore/CacheError/Code/codec`` and leaves the stored entry as it was.
///
/// ```swift
/// let cache = try DiskCache<String, Profile>(configuration: configuration, codec: .json())
/// ```
public struct DiskValueCodec<Value>: Sendable {
    /// Encodes a value; may throw.
    public var encode: @Sendable (Value) throws -> Data
    /// Decodes bytes written by ``encode``; may throw.
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

extension DiskValueCodec where Value == Data {
    /// Stores `Data` unchanged.
    public static var data: DiskValueCodec<Data> { DiskValueCodec(encode: { $0 }, decode: { $0 }) }
}

extension DiskValueCodec where Value: Codable & Sendable {
    /// Encodes values as JSON with `JSONEncoder` and decodes them with `JSONDecoder`.
    ///
    /// - Returns: A JSON codec for `Value`.
    public static func json() -> DiskValueCodec<Value> {
        DiskValueCodec(
            encode: { try JSONEncoder().encode($0) },
            decode: { try JSONDecoder().decode(Value.self, from: $0) }
        )
    }

    /// Encodes values as binary property lists (smaller and faster to parse than JSON for numbers and
    /// `Data`).
    ///
    /// - Returns: A property-list codec for `Value`.
    public static func propertyList() -> DiskValueCodec<Value> {
        DiskValueCodec(
            encode: { value in
                let encoder = PropertyListEncoder()
                encoder.outputFormat = .binary
                return try encoder.encode(value)
            },
            decode: { try PropertyListDecoder().decode(Value.self, from: $0) }
        )
    }
}
