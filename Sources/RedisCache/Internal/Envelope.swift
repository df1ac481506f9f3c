import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sealed form of one entry in Redis (Docs/RedisCache.md, "The envelope").
///
/// ```
/// offset  size  field
///      0     1  version (1)
///      1     1  flags: bit 0 = has expiry, bit 1 = has cost, bit 2 = has stale-until; other bits 0
///      2     8  epoch, UInt64 big-endian
///     10     8  expiry: IEEE 754 bits of seconds since 1970, big-endian (0 without expiry)
///     18     8  cost, Int64 big-endian (0 without cost)
///    (26     8  stale-until: IEEE 754 bits of seconds since 1970, big-endian; only with flag bit 2)
///                flag bit 3: the value bytes start with a tag block (the kernel's `TagBlock`)
///   h=26|34 12  nonce (random)
///   h+12     n  AES-256-GCM ciphertext of: key length (UInt32 big-endian), canonical key bytes, value bytes
///  h+12+n   16  tag
/// ```
///
/// An envelope without flag bit 2 is byte for byte the earlier format, so envelopes written before
/// stale retention still open. The associated data is the header (26 or 34 bytes), then the namespace's
/// length (one byte) and bytes, then the Redis key name — built by the sealed-record kernel's one builder
/// (`RecordBinding.redisKey`, Sources/SealedRecord) — so a value copied to another key or namespace, replayed
/// under a later epoch or given another expiry or cost fails to open. The full canonical key inside is compared on open, so even a
/// collision of the 128-bit names cannot serve another key's value.
///
/// Thread safety: stateless functions over values; the prepared subkey may be shared.
enum Envelope {
    static let version: UInt8 = 1
    static let headerByteCount = 26
    /// The header of an envelope that carries a stale-until instant (flag bit 2).
    static let staleHeaderByteCount = 34
    static let flagHasStaleUntil: UInt8 = 0b100
    /// The value bytes start with a tag block (the kernel's `TagBlock`): the entry's tags and their versions.
    static let flagHasTags: UInt8 = 0b1000
    static let nonceByteCount = 12
    static let tagByteCount = 16
    /// Everything but the plaintext.
    static let overhead = staleHeaderByteCount + nonceByteCount + tagByteCount + 4

    /// What the header says.
    struct Header: Equatable {
        var epoch: UInt64
        var expiresAt: Date?
        var cost: Int?
        /// Until when the entry is kept past `expiresAt` for loads that may serve it stale, or `nil`.
        var staleUntil: Date? = nil
        /// Whether the value bytes start with a tag block.
        var hasTags = false

        /// What the header says about the envelope's life, for the kernel's liveness verdict; `tagVersions`
        /// are the stamps of its tag block once opened (none for a header-only judgement).
        func stamp(tagVersions: [String: UInt64] = [:]) -> RecordStamp {
            RecordStamp(epoch: epoch, expiresAt: expiresAt, staleUntil: staleUntil, tagVersions: tagVersions)
        }
    }

    /// The header length of an envelope with `flags`.
    static func headerLength(flags: UInt8) -> Int {
        flags & flagHasStaleUntil == 0 ? headerByteCount : staleHeaderByteCount
    }

    /// Seals `value` for `keyBytes` under `redisKey`.
    ///
    /// - Throws: ``CryptoFailure`` when the library or the random generator fails.
    static func seal(
        value: Data, keyBytes: Data, header: Header, namespace: String, redisKey: [UInt8],
        subkey: any PreparedAESGCMSubkey
    ) throws -> [UInt8] {
        let headerBytes = encode(header)
        let binding = RecordBinding.redisKey(namespace: namespace, name: redisKey)
        var keyPart = Data(capacity: 4 + keyBytes.count)
        keyPart.append(contentsOf: bigEndian(UInt32(keyBytes.count)))
        keyPart.append(keyBytes)
        let plaintextCount = keyPart.count + value.count
        let headerCount = headerBytes.count
        var output = [UInt8](repeating: 0, count: headerCount + nonceByteCount + plaintextCount + tagByteCount)
        try output.withUnsafeMutableBytes { buffer in
            buffer.copyBytes(from: headerBytes)
            let nonce = UnsafeMutableRawBufferPointer(
                rebasing: buffer[headerCount..<headerCount + nonceByteCount])
            try CryptoBackend.fillRandom(nonce)
            let cipherStart = headerCount + nonceByteCount
            let ciphertext = UnsafeMutableRawBufferPointer(rebasing: buffer[cipherStart..<cipherStart + plaintextCount])
            let tag = UnsafeMutableRawBufferPointer(rebasing: buffer[(cipherStart + plaintextCount)...])
            try binding.withAssociatedData(header: UnsafeRawBufferPointer(rebasing: buffer[0..<headerCount])) { ad in
                try keyPart.withUnsafeBytes { first in
                    try value.withUnsafeBytes { second in
                        try subkey.seal(
                            nonce: UnsafeRawBufferPointer(nonce), associatedData: ad, first: first, second: second,
                            ciphertext: ciphertext, tag: tag)
                    }
                }
            }
        }
        return output
    }

    /// Why an envelope did not open.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// Too short, an unknown version or flags: not an envelope of this format.
        case malformed(String)
        /// The tag did not verify: tampered, copied from another key, another namespace or master key.
        case authenticationFailed
        /// It opened but holds another key's bytes.
        case keyMismatch

        var description: String {
            switch self {
            case .malformed(let reason): return "malformed envelope: \(reason)"
            case .authenticationFailed: return "the envelope does not authenticate (altered, moved or replayed)"
            case .keyMismatch: return "the envelope holds another key"
            }
        }
    }

    /// Reads the header only (no crypto).
    static func header(of bytes: [UInt8]) throws(Failure) -> Header {
        guard bytes.count >= headerByteCount + nonceByteCount + 4 + tagByteCount else {
            throw .malformed("\(bytes.count) bytes")
        }
        guard bytes[0] == version else { throw .malformed("version \(bytes[0])") }
        let flags = bytes[1]
        guard flags & ~0b1111 == 0, flags & flagHasStaleUntil == 0 || flags & 1 != 0 else {
            throw .malformed("flags \(flags)")
        }
        guard bytes.count >= headerLength(flags: flags) + nonceByteCount + 4 + tagByteCount else {
            throw .malformed("\(bytes.count) bytes")
        }
        let epoch = readUInt64(bytes, at: 2)
        let expiryBits = readUInt64(bytes, at: 10)
        let cost = Int64(bitPattern: readUInt64(bytes, at: 18))
        let expiry = Double(bitPattern: expiryBits)
        guard flags & 1 == 0 || expiry.isFinite else { throw .malformed("expiry") }
        var staleUntil: Date?
        if flags & flagHasStaleUntil != 0 {
            let seconds = Double(bitPattern: readUInt64(bytes, at: headerByteCount))
            guard seconds.isFinite else { throw .malformed("stale-until") }
            staleUntil = Date(timeIntervalSince1970: seconds)
        }
        return Header(
            epoch: epoch, expiresAt: flags & 1 == 0 ? nil : Date(timeIntervalSince1970: expiry),
            cost: flags & 2 == 0 ? nil : Int(cost), staleUntil: staleUntil, hasTags: flags & flagHasTags != 0)
    }

    /// Opens `bytes` sealed for `keyBytes` under `redisKey` and returns the value bytes.
    ///
    /// - Throws: ``Failure`` when the bytes are not an envelope for this key; ``CryptoFailure`` for a
    ///   library failure.
    static func open(
        _ bytes: [UInt8], keyBytes: Data, namespace: String, redisKey: [UInt8], subkey: any PreparedAESGCMSubkey
    ) throws -> Data {
        let headerCount = headerLength(flags: bytes[1])
        let binding = RecordBinding.redisKey(namespace: namespace, name: redisKey)
        let cipherStart = headerCount + nonceByteCount
        let plaintextCount = bytes.count - cipherStart - tagByteCount
        let keyPartCount = 4 + keyBytes.count
        guard plaintextCount >= keyPartCount else {
            // Shorter than this key's bytes: it cannot hold this key whatever it decrypts to.
            throw Failure.keyMismatch
        }
        var keyPart = [UInt8](repeating: 0, count: keyPartCount)
        var value = Data(count: plaintextCount - keyPartCount)
        try bytes.withUnsafeBytes { buffer in
            try binding.withAssociatedData(header: UnsafeRawBufferPointer(rebasing: buffer[0..<headerCount])) { ad in
                try keyPart.withUnsafeMutableBytes { first in
                    try value.withUnsafeMutableBytes { second in
                        do {
                            try subkey.open(
                                nonce: UnsafeRawBufferPointer(rebasing: buffer[headerCount..<cipherStart]),
                                associatedData: ad,
                                ciphertext: UnsafeRawBufferPointer(
                                    rebasing: buffer[cipherStart..<cipherStart + plaintextCount]),
                                tag: UnsafeRawBufferPointer(rebasing: buffer[(cipherStart + plaintextCount)...]),
                                first: first, second: second)
                        } catch CryptoFailure.authenticationFailed {
                            throw Failure.authenticationFailed
                        }
                    }
                }
            }
        }
        let storedCount = keyPart.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard storedCount == keyBytes.count, keyPart.dropFirst(4).elementsEqual(keyBytes) else {
            throw Failure.keyMismatch
        }
        return value
    }

    private static func encode(_ header: Header) -> [UInt8] {
        // A stale-until instant is written only when it lies after an expiry: otherwise it means nothing.
        let staleUntil = header.expiresAt.flatMap { expiresAt in header.staleUntil.flatMap { $0 > expiresAt ? $0 : nil }
        }
        var bytes: [UInt8] = [
            version,
            (header.expiresAt == nil ? 0 : 1) | (header.cost == nil ? 0 : 2)
                | (staleUntil == nil ? 0 : flagHasStaleUntil) | (header.hasTags ? flagHasTags : 0),
        ]
        bytes += bigEndian(header.epoch)
        bytes += bigEndian(header.expiresAt?.timeIntervalSince1970.bitPattern ?? 0)
        bytes += bigEndian(UInt64(bitPattern: Int64(header.cost ?? 0)))
        if let staleUntil { bytes += bigEndian(staleUntil.timeIntervalSince1970.bitPattern) }
        return bytes
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    private static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
