import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Names and seals the per-tag version counter files in `tags/` (Docs/DiskFormat.md, "Tag counters").
///
/// A counter file is named by the lower-case hex HMAC-SHA-256 of `"strata disk v1 tag\0"` + the tag's canonical
/// bytes (NFC UTF-8, `TagBlock.canonicalBytes(of:)`, so both spellings of "é" share one counter) under a naming subkey of its own (HKDF with the salt ``salt``, so never the entries' naming subkey),
/// and holds 40 bytes: the version (UInt64, big-endian), then HMAC-SHA-256 under the tag MAC subkey of
/// `"strata disk v1 tag counter\0"` + the file name + the version. A file copied to another tag's name, or
/// a version edited without the subkey, fails the MAC.
///
/// Thread safety: immutable; the prepared HMAC subkeys may be used from any number of threads at once.
struct TagCounters: Sendable {
    static let folderName = "tags"
    static let fileSize = 8 + KeyedNamer.macByteCount
    /// The HKDF salt of the tag subkeys: fixed, so counters outlive `removeAll()` (a new key epoch).
    static let salt = Data("strata.disk.tags.v1".utf8)
    /// Keeps a tag's name input apart from every other HMAC input of the store.
    static let nameSeparator = Data("strata disk v1 tag\0".utf8)
    static let macContext = Data("strata disk v1 tag counter\0".utf8)

    private let namer: KeyedNamer
    private let mac: any PreparedHMACSubkey

    init(master: MasterKey) throws {
        let subkeys = try StoreSubkeys.derive(master: master, epochSalt: Self.salt)
        namer = try KeyedNamer(namingSubkey: subkeys.namingSubkey)
        // The "encryption" subkey of the tag salt encrypts nothing: it is the counters' MAC subkey.
        mac = try CryptoBackend.prepareHMACSHA256(key: subkeys.encryptionSubkey)
    }

    /// The counter file name of `tag`: 64 lower-case hex digits.
    func fileName(of tag: String) throws -> String {
        try namer.hexName(of: Self.nameSeparator + TagBlock.canonicalBytes(of: tag))
    }

    /// The 40 bytes of a counter file `name` holding `version`.
    func seal(_ version: UInt64, name: String) throws -> Data {
        var file = Data(count: Self.fileSize)
        withUnsafeBytes(of: version.bigEndian) { file.replaceSubrange(0..<8, with: $0) }
        let tag = try authenticator(name: name, versionBytes: file.prefix(8))
        file.replaceSubrange(8..<Self.fileSize, with: tag)
        return file
    }

    /// The version a counter file `name` holds, or `nil` when its bytes are not a counter this store's master
    /// key sealed for that name (tampered, truncated, copied from another tag).
    func open(_ file: Data, name: String) throws -> UInt64? {
        guard file.count == Self.fileSize else { return nil }
        let versionBytes = file.prefix(8)
        let expected = try authenticator(name: name, versionBytes: versionBytes)
        // Constant-time comparison: the difference is accumulated, never returned early.
        var difference: UInt8 = 0
        for (a, b) in zip(expected, file.suffix(KeyedNamer.macByteCount)) { difference |= a ^ b }
        guard difference == 0 else { return nil }
        return versionBytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func authenticator(name: String, versionBytes: Data) throws -> Data {
        let message = Self.macContext + Data(name.utf8) + versionBytes
        var output = Data(count: KeyedNamer.macByteCount)
        try output.withUnsafeMutableBytes { out in
            try message.withUnsafeBytes { try mac.authenticate($0, into: out) }
        }
        return output
    }
}
