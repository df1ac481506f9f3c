import CacheCore
import CacheCrypto
import Foundation

/// The Redis key names of one namespace and the subkeys that seal and name its entries.
///
/// ```
/// strata:v1:<namespace>:k:<base64url(first 128 bits of HMAC-SHA-256(naming subkey, canonical key bytes))>
/// strata:v1:<namespace>:epoch     the epoch counter (INCR on removeAll)
/// strata:v1:<namespace>:check     the key-check record (tells a wrong master key from damage)
/// ```
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
        prefix = "strata:v1:\(namespace):"
        epochKey = Array((prefix + "epoch").utf8)
        checkKey = Array((prefix + "check").utf8)
        let subkeys = try StoreSubkeys.derive(master: master, epochSalt: Data("strata redis v1 \(namespace)".utf8))
        sealing = try CryptoBackend.prepareAESGCM(key: subkeys.encryptionSubkey)
        namer = try KeyedNamer(namingSubkey: subkeys.namingSubkey)
        checkSubkey = try StoreSubkeys.keyCheckSubkey(master: master)
    }

    /// The Redis key for canonical key bytes.
    func entryKey(for keyBytes: Data) throws -> [UInt8] {
        var name = Array((prefix + "k:").utf8)
        try namer.withMAC(of: keyBytes) { mac in
            name += Self.base64URL(mac.prefix(16))
        }
        return name
    }

    /// The Redis key of a tag's version counter: `…:t:` and 128 bits of the HMAC of the tag's UTF-8 bytes
    /// after a domain separator that no entry's MAC input shares in meaning (and `:t:`, not `:k:`, keeps
    /// the two name spaces apart whatever the bytes).
    func tagKey(for tag: String) throws -> [UInt8] {
        var name = Array((prefix + "t:").utf8)
        try namer.withMAC(of: Data("strata redis v1 tag\u{0}".utf8) + Data(tag.utf8)) { mac in
            name += Self.base64URL(mac.prefix(16))
        }
        return name
    }

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
        guard Data(bytes[Self.checkMagic.count..<fingerprintEnd]) == (try fingerprint()) else {
            return .otherMasterKey
        }
        let opens = try? MasterKeyCheck.opens(
            Data(bytes[fingerprintEnd...]), to: Self.checkPlaintext, associatedData: Data(checkKey),
            checkSubkey: checkSubkey)
        return opens == true ? .matches : .damaged
    }

    /// Base64url without padding (RFC 4648, section 5).
    static func base64URL(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Array(
            Data(bytes).base64EncodedString().utf8.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): return UInt8(ascii: "-")
                case UInt8(ascii: "/"): return UInt8(ascii: "_")
                case UInt8(ascii: "="): return nil
                default: return byte
                }
            })
    }
}
