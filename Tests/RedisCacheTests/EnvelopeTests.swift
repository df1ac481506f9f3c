import Foundation
import Testing

@testable import RedisCache

/// The sealed envelope on its own, without a server: each binding of the associated data (the Redis key
/// name, the namespace, every header field) and the key comparison after opening are asserted by the
/// *reason* an envelope fails, so that removing one layer fails a test even where another layer would
/// still turn the read into a counted miss.
@Suite struct EnvelopeTests {
    /// One namespace's subkeys under a fixed master key, so every test seals and opens with the same key.
    static func keys(namespace: String = "alpha") throws -> NamespaceKeys {
        try NamespaceKeys(namespace: namespace, master: MasterKey(bytes: Data(repeating: 0x5A, count: 32)))
    }

    static let keyBytes = Data("user:42".utf8)
    static let header = Envelope.Header(
        epoch: 7, expiresAt: Date(timeIntervalSince1970: 1_800_000_000), cost: 3)

    /// Seals `value` for `keyBytes` under its own name in `keys`' namespace.
    static func seal(
        _ value: Data = Data("payload".utf8), keyBytes: Data = keyBytes, header: Envelope.Header = header,
        keys: NamespaceKeys
    ) throws -> (bytes: [UInt8], name: [UInt8]) {
        let name = try keys.entryKey(for: keyBytes)
        let bytes = try Envelope.seal(
            value: value, keyBytes: keyBytes, header: header, namespace: keys.namespace, redisKey: name,
            subkey: keys.sealing)
        return (bytes, name)
    }

    /// Opens `bytes` and returns the failure it throws, or `nil` when it opens.
    static func failure(
        opening bytes: [UInt8], keyBytes: Data = keyBytes, namespace: String, name: [UInt8], keys: NamespaceKeys
    ) throws -> Envelope.Failure? {
        do {
            _ = try Envelope.open(bytes, keyBytes: keyBytes, namespace: namespace, redisKey: name, subkey: keys.sealing)
            return nil
        } catch let failure as Envelope.Failure {
            return failure
        }
    }

    @Test func aSealedValueOpensForItsKeyNameAndNamespace() throws {
        let keys = try Self.keys()
        let (bytes, name) = try Self.seal(keys: keys)
        let value = try Envelope.open(
            bytes, keyBytes: Self.keyBytes, namespace: keys.namespace, redisKey: name, subkey: keys.sealing)
        #expect(value == Data("payload".utf8))
        #expect(try Envelope.header(of: bytes) == Self.header)
    }

    @Test func aValueOpenedUnderAnotherRedisKeyNameFailsAuthenticationBeforeAnyKeyComparison() throws {
        // Given a value sealed for a key under its own name
        let keys = try Self.keys()
        let (bytes, _) = try Self.seal(keys: keys)
        // When it is opened under another entry's name, for the very key it holds (so the key comparison
        // after opening would pass: only the name in the associated data can refuse it)
        let otherName = try keys.entryKey(for: Data("user:43".utf8))
        let failure = try Self.failure(opening: bytes, namespace: keys.namespace, name: otherName, keys: keys)
        // Then the tag does not verify
        #expect(failure == .authenticationFailed)
    }

    @Test func aValueOpenedInAnotherNamespaceFailsAuthentication() throws {
        // Given a value sealed in namespace "alpha", and "bravo": a name of the same length, so the length
        // byte before it in the associated data is the same and only the namespace's bytes differ
        let keys = try Self.keys(namespace: "alpha")
        let (bytes, name) = try Self.seal(keys: keys)
        // When it is opened with the same subkey, key and name but the other namespace
        let failure = try Self.failure(opening: bytes, namespace: "bravo", name: name, keys: keys)
        // Then the tag does not verify (the subkeys and names differ per namespace too, but not here)
        #expect(failure == .authenticationFailed)
    }

    /// Header fields rewritten in place: the epoch (a value of a cleared epoch made current), the expiry
    /// (a value replayed with a later expiry), the cost, and the flags (the expiry dropped).
    static let rewrites: [(field: String, rewrite: @Sendable (inout [UInt8]) -> Void)] = [
        ("epoch", { $0[9] = 8 }),
        (
            "expiry",
            { bytes in
                let later = Date(timeIntervalSince1970: 1_900_000_000).timeIntervalSince1970.bitPattern
                for index in 0..<8 { bytes[10 + index] = UInt8(truncatingIfNeeded: later >> (56 - 8 * index)) }
            }
        ),
        ("cost", { $0[25] = 4 }),
        ("flags", { $0[1] &= ~1 }),
    ]

    @Test(arguments: 0..<rewrites.count)
    func everyHeaderFieldRewrittenFailsAuthentication(index: Int) throws {
        // Given a value sealed with epoch 7, an expiry and cost 3
        let keys = try Self.keys()
        let (sealed, name) = try Self.seal(keys: keys)
        // When one header field is rewritten to another well-formed value
        var bytes = sealed
        Self.rewrites[index].rewrite(&bytes)
        #expect(try Envelope.header(of: bytes) != Self.header, "\(Self.rewrites[index].field)")
        // Then the header still parses, but the envelope does not authenticate
        let failure = try Self.failure(opening: bytes, namespace: keys.namespace, name: name, keys: keys)
        #expect(failure == .authenticationFailed, "\(Self.rewrites[index].field)")
    }

    @Test func aStaleUntilInstantRewrittenFailsAuthentication() throws {
        // Given an envelope with a stale-until instant (the 34-byte header)
        let keys = try Self.keys()
        var header = Self.header
        header.staleUntil = Date(timeIntervalSince1970: 1_800_000_600)
        let (sealed, name) = try Self.seal(header: header, keys: keys)
        // When its stale-until instant is moved (its low byte changed)
        var bytes = sealed
        bytes[33] ^= 0x01
        // Then it does not authenticate
        let failure = try Self.failure(opening: bytes, namespace: keys.namespace, name: name, keys: keys)
        #expect(failure == .authenticationFailed)
    }

    @Test func anotherKeysBytesUnderTheSameNameOpenButFailTheKeyComparison() throws {
        // Given a value sealed for "user:42" under its name (as if two keys' 128-bit names collided)
        let keys = try Self.keys()
        let (bytes, name) = try Self.seal(keys: keys)
        // When it is opened under that same name for another key of the same length
        let failure = try Self.failure(
            opening: bytes, keyBytes: Data("user:43".utf8), namespace: keys.namespace, name: name, keys: keys)
        // Then it authenticates, and the full key inside tells it apart
        #expect(failure == .keyMismatch)
    }

    @Test func anEmptyValueOfAnEmptyKeyIsTheSmallestEnvelopeAndOpens() throws {
        // Given the empty key and an empty value: a header, a nonce, the 4-byte key length and a tag
        let keys = try Self.keys()
        let (bytes, name) = try Self.seal(Data(), keyBytes: Data(), keys: keys)
        #expect(bytes.count == Envelope.headerByteCount + Envelope.nonceByteCount + 4 + Envelope.tagByteCount)
        // When it is read, then its header parses and it opens to the empty value
        #expect(try Envelope.header(of: bytes) == Self.header)
        let value = try Envelope.open(
            bytes, keyBytes: Data(), namespace: keys.namespace, redisKey: name, subkey: keys.sealing)
        #expect(value.isEmpty)
        // And an empty value of a non-empty key opens too
        let (other, otherName) = try Self.seal(Data(), keys: keys)
        #expect(
            try Envelope.open(
                other, keyBytes: Self.keyBytes, namespace: keys.namespace, redisKey: otherName, subkey: keys.sealing
            ).isEmpty)
    }

    @Test func unknownFlagsAreMalformedBeforeAnyCryptography() throws {
        let keys = try Self.keys()
        var (bytes, _) = try Self.seal(keys: keys)
        bytes[1] |= 0b1_0000
        #expect(throws: Envelope.Failure.malformed("flags \(bytes[1])")) { _ = try Envelope.header(of: bytes) }
    }
}
