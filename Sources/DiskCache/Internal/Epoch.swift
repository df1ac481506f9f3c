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

    /// What an engine holds before it has read its database's epoch: no salt (so the first salt it reads never
    /// matches, and is derived and adopted), no subkey (sealing or opening under it throws). Costs nothing,
    /// where deriving a stand-in epoch at every open cost two HKDF computations, an HMAC and a cipher set-up.
    static let unadopted = Epoch(salt: Data(), id: 0, encryptionSubkey: Data(), sealingSubkey: UnadoptedSubkey())

    static func derive(master: MasterKey, salt: Data) throws -> Epoch {
        let keys = try StoreSubkeys.derive(master: master, epochSalt: salt)
        let tag = try CryptoBackend.hmacSHA256(key: keys.encryptionSubkey, data: Data("strata.disk.epoch-id.v1".utf8))
        return Epoch(
            salt: salt, id: tag.readBigEndian(UInt64.self, at: 0), encryptionSubkey: keys.encryptionSubkey,
            sealingSubkey: try CryptoBackend.prepareAESGCM(key: keys.encryptionSubkey))
    }
}

/// The subkey of ``Epoch/unadopted``: refuses every use, so a record can never be sealed or opened under an
/// epoch the engine has not read from its database.
private struct UnadoptedSubkey: PreparedAESGCMSubkey {
    private static var refusal: CacheError {
        CacheError(.crypto, "no key epoch was adopted from the store yet; nothing can be sealed or opened")
    }

    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer,
        ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws { throw Self.refusal }

    func sealChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        first: UnsafeRawBufferPointer, second: UnsafeRawBufferPointer, chunkSize: Int,
        output: (UnsafeRawBufferPointer) throws -> Void, tag: UnsafeMutableRawBufferPointer
    ) throws { throw Self.refusal }

    func openChecked(
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer
    ) throws { throw Self.refusal }
}
