import CacheCore
import CacheCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The subkeys of one key epoch: everything written between two `removeAll()` calls.
struct Epoch: Sendable {
    /// The 32 random bytes in the key-check record that, with the master key, derive this epoch's subkeys.
    var salt: Data
    /// Names this epoch in each entry header (not secret; derived so it reveals nothing about the key).
    var id: UInt64
    /// The AES-256-GCM subkey for entries.
    var encryptionSubkey: Data
    /// ``encryptionSubkey`` set up once for the many seals and opens of this epoch.
    var sealingSubkey: any PreparedAESGCMSubkey

    static func derive(master: MasterKey, salt: Data) throws -> Epoch {
        let keys = try StoreSubkeys.derive(master: master, epochSalt: salt)
        let tag = try CryptoBackend.hmacSHA256(key: keys.encryptionSubkey, data: Data("strata.disk.epoch-id.v1".utf8))
        return Epoch(
            salt: salt, id: tag.readBigEndian(UInt64.self, at: 0), encryptionSubkey: keys.encryptionSubkey,
            sealingSubkey: try CryptoBackend.prepareAESGCM(key: keys.encryptionSubkey))
    }
}
