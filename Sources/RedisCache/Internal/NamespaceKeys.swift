import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Redis key names of one namespace (layout v2) and the subkeys that seal and name its entries.
///
/// ```
/// strata:v2:<namespace>:k:{<base64url(first 128 bits of HMAC-SHA-256(naming subkey, canonical key bytes))>}
/// strata:v2:<namespace>:{<namespace>}:epoch        the epoch counter (INCR on removeAll)
/// strata:v2:<namespace>:{<namespace>}:check        the key-check record (tells a wrong master key from damage)
/// strata:v2:<namespace>:{<namespace>}:t:<tag MAC>  a tag's version counter
/// strata:v2:<namespace>:r:{<MAC>}                  the entry's removal counter (Lease/RedisCache+LoadFencing.swift)
/// strata:v2:<namespace>:l:{<MAC>}                  the entry's load lease (Lease/RedisCache+Lease.swift)
/// ```
///
/// The braces are Redis Cluster hash tags (only the bytes between the first `{` and the next `}` choose the
/// slot): a namespace's counters share one slot, so an entry's fences (epoch and tag versions) are one `MGET`
/// on a cluster too, while entries spread by their MAC, and whatever a later step keeps beside one entry (a
/// lease, a removal counter) can name the same MAC in braces to share its slot. A namespace holds no brace
/// (`RedisCacheConfiguration` allows `[A-Za-z0-9._-]`), so the first `{` is always the layout's. Every name
/// starts with `strata:v2:<namespace>:`, the one prefix tracking follows. v1 (`strata:v1:<namespace>:k:<MAC>`,
/// `…:epoch`, `…:check`, `…:t:<MAC>`, no braces) hashed a namespace's counters to unrelated slots; a v2 tier
/// neither reads nor removes v1 keys (Docs/RedisCache.md, "Key layout").
///
/// Subkeys come from ``StoreSubkeys/derive(master:epochSalt:)`` with the salt `strata redis v1 <namespace>`:
/// fixed per namespace, so every process with the master key derives the same ones; the epoch is bound
/// by the envelope's associated data instead of a per-epoch key.
///
/// Thread safety: immutable; the prepared subkeys may be used from any thread.
struct NamespaceKeys: Sendable {
    let namespace: String
    let prefix: String
    let epochKey: [UInt8]
    let checkKey: [UInt8]
    /// `<prefix>k:{` and `<prefix>{<namespace>}:t:`, kept as bytes: every operation names a key, and building the prefix
    /// from the namespace string each time cost allocations per request.
    let entryPrefix: [UInt8]
    let tagPrefix: [UInt8]
    let sealing: any PreparedAESGCMSubkey
    let namer: KeyedNamer
    let checkSubkey: Data

    /// The plaintext the key-check record seals.
    static let checkPlaintext = Data("strata redis v1 key check".utf8)
    /// The fingerprint's context.
    static let checkContext = Data("strata redis v1 key fingerprint".utf8)
    /// The record's magic, then the fingerprint, then the seal.
    static let checkMagic = Array("SKC1".utf8)

    init(namespace: String, master: MasterKey) throws {
        self.namespace = namespace
        prefix = "strata:v2:\(namespace):"
        let counters = prefix + "{\(namespace)}:"
        epochKey = Array((counters + "epoch").utf8)
        checkKey = Array((counters + "check").utf8)
        entryPrefix = Array((prefix + "k:{").utf8)
        tagPrefix = Array((counters + "t:").utf8)
        let subkeys = try StoreSubkeys.derive(master: master, epochSalt: Data("strata redis v1 \(namespace)".utf8))
        sealing = try CryptoBackend.prepareAESGCM(key: subkeys.encryptionSubkey)
        namer = try KeyedNamer(namingSubkey: subkeys.namingSubkey)
        checkSubkey = try StoreSubkeys.keyCheckSubkey(master: master)
    }

    /// The Redis key for canonical key bytes: `<prefix>k:{<MAC>}`.
    func entryKey(for keyBytes: Data) throws -> [UInt8] {
        try namer.withMAC(of: keyBytes) { mac in Self.name(entryPrefix, mac, closingBrace: true) }
    }

    /// A name kept beside an entry, in its slot: the entry's name `<prefix>k:{<MAC>}` with `k` replaced by
    /// `kind` (`r` the removal counter, `l` the lease). Not under `k:`, so neither tracking (which maps only
    /// `k:` names back to keys) nor the purge (`SCAN MATCH <prefix>k:*`) takes it for an entry.
    func sibling(ofEntry name: [UInt8], _ kind: Unicode.Scalar) -> [UInt8] {
        var sibling = name
        sibling[entryPrefix.count - 3] = UInt8(ascii: kind)
        return sibling
    }

    /// The Redis key of a tag's version counter: `…:{<namespace>}:t:` and 128 bits of the HMAC of the tag's canonical bytes
    /// (NFC UTF-8, `TagBlock.canonicalBytes(of:)`: both spellings of "é" name one key) after a domain separator
    /// that no entry's MAC input shares in meaning (and `:t:`, not `:k:`, keeps the two name spaces apart
    /// whatever the bytes).
    func tagKey(for tag: String) throws -> [UInt8] {
        try namer.withMAC(of: Data("strata redis v1 tag\u{0}".utf8) + TagBlock.canonicalBytes(of: tag)) { mac in
            Self.name(tagPrefix, mac, closingBrace: false)
        }
    }

    /// `prefix` followed by the base64url form of the MAC's first 128 bits (and `}` when `prefix` opened a
    /// hash tag), built in one allocation.
    private static func name(_ prefix: [UInt8], _ mac: UnsafeRawBufferPointer, closingBrace: Bool) -> [UInt8] {
        var name = [UInt8]()
        name.reserveCapacity(prefix.count + base64URLCount(of: nameMACByteCount) + 1)
        name += prefix
        appendBase64URL(UnsafeRawBufferPointer(rebasing: mac.prefix(nameMACByteCount)), to: &name)
        if closingBrace { name.append(UInt8(ascii: "}")) }
        return name
    }

    /// The MAC bytes a name keeps: 128 bits.
    static let nameMACByteCount = 16

    /// This master key's fingerprint (public).
    func fingerprint() throws -> Data {
        try MasterKeyCheck.fingerprint(checkSubkey: checkSubkey, context: Self.checkContext)
    }

    /// A fresh key-check record.
    func makeCheckRecord() throws -> [UInt8] {
        let seal = try MasterKeyCheck.seal(
            Self.checkPlaintext, associatedData: Data(checkKey), checkSubkey: checkSubkey)
        return Self.checkMagic + Array(try fingerprint()) + Array(seal)
    }

    /// What a stored key-check record says about this master key.
    enum CheckOutcome { case matches, otherMasterKey, damaged }

    func evaluate(checkRecord bytes: [UInt8]) throws -> CheckOutcome {
        let fingerprintEnd = Self.checkMagic.count + MasterKeyCheck.fingerprintByteCount
        guard bytes.count > fingerprintEnd, bytes.prefix(Self.checkMagic.count).elementsEqual(Self.checkMagic) else {
            return .damaged
        }
        let opens = try? MasterKeyCheck.opens(
            Data(bytes[fingerprintEnd...]), to: Self.checkPlaintext, associatedData: Data(checkKey),
            checkSubkey: checkSubkey)
        guard Data(bytes[Self.checkMagic.count..<fingerprintEnd]) == (try fingerprint()) else {
            // The seal does not cover the fingerprint: a seal that opens under this key says the key is right
            // and only the fingerprint's bytes were damaged; one that does not is another master key's record.
            return opens == true ? .damaged : .otherMasterKey
        }
        return opens == true ? .matches : .damaged
    }

    /// Base64url without padding (RFC 4648, section 5).
    static func base64URL(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var text = [UInt8]()
        text.reserveCapacity(base64URLCount(of: bytes.count))
        Array(bytes).withUnsafeBytes { appendBase64URL($0, to: &text) }
        return text
    }

    /// The length of the unpadded base64url form of `count` bytes.
    static func base64URLCount(of count: Int) -> Int { (count * 8 + 5) / 6 }

    /// Appends the unpadded base64url form of `bytes` (RFC 4648, sections 4 and 5: each 3 bytes become 4
    /// characters of the URL-safe alphabet; a final 1 or 2 bytes become 2 or 3 characters, without `=`).
    /// Written out rather than through Foundation's base64 and a character mapping: it runs once per request.
    static func appendBase64URL(_ bytes: UnsafeRawBufferPointer, to text: inout [UInt8]) {
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            text.append(base64URLDigit(group >> 18))
            text.append(base64URLDigit(group >> 12))
            text.append(base64URLDigit(group >> 6))
            text.append(base64URLDigit(group))
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            text.append(base64URLDigit(group >> 18))
            text.append(base64URLDigit(group >> 12))
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            text.append(base64URLDigit(group >> 18))
            text.append(base64URLDigit(group >> 12))
            text.append(base64URLDigit(group >> 6))
        default:
            break
        }
    }

    /// The base64url character for the low 6 bits of `value` (RFC 4648, table 2).
    private static func base64URLDigit(_ value: UInt32) -> UInt8 {
        let digit = UInt8(truncatingIfNeeded: value & 0x3F)
        switch digit {
        case 0..<26: return UInt8(ascii: "A") + digit
        case 26..<52: return UInt8(ascii: "a") + digit - 26
        case 52..<62: return UInt8(ascii: "0") + digit - 52
        case 62: return UInt8(ascii: "-")
        default: return UInt8(ascii: "_")
        }
    }
}
