import Foundation

#if canImport(CBenchFloor)
import CBenchFloor
#endif

/// The floor: `PlainFileStore`'s file I/O plus only the cryptography that every cache keeping one
/// AES-256-GCM-encrypted file per entry under a keyed-hash file name must do, called straight through
/// libcrypto (CBenchFloor), with no Strata code.
///
/// A set names the file (HMAC-SHA-256 of the key), draws a 96-bit nonce, encrypts and writes a temporary
/// file that it renames into place; a get names the file, reads it and decrypts and verifies it in place.
/// Nothing else: no header or associated data, no expiry, no index. Its cost over the plain baseline is
/// therefore the least any such cache can add on this machine, so when that alone exceeds a target's
/// ratio, the target cannot be met by better code — only by another design (another cipher, or not one
/// file per entry). `nil` from ``open(in:)`` where libcrypto is not linked (Apple platforms), and the
/// floor is skipped there.
///
/// Not thread-safe: one store per thread, like the one EVP context a thread borrows in DiskCache.
final class FloorStore {
    #if canImport(CBenchFloor)
    private let files: PlainFileStore
    private let cipher: OpaquePointer

    private init(files: PlainFileStore, cipher: OpaquePointer) {
        self.files = files
        self.cipher = cipher
    }

    deinit { strata_floor_cipher_free(cipher) }

    /// A store in `directory`, keyed with fixed keys (the floor measures the cipher, not key management).
    static func open(in directory: URL) throws -> FloorStore? {
        let encryptionKey = [UInt8](DiskFixture.masterKey)
        let namingKey = encryptionKey.map { $0 ^ 0x5C }
        guard let cipher = strata_floor_cipher_create(encryptionKey, namingKey) else {
            throw PlainFileStore.IOError(description: "libcrypto could not set up AES-256-GCM and HMAC-SHA-256")
        }
        return FloorStore(files: PlainFileStore(directory: directory, fsync: false), cipher: cipher)
    }

    /// Encrypts `value` under a fresh nonce and writes it atomically under the key's keyed-hash name.
    func write(_ value: Data, key: String) throws {
        var sealed = Data(count: value.count + Int(STRATA_FLOOR_OVERHEAD))
        let status = sealed.withUnsafeMutableBytes { output in
            value.withUnsafeBytes { strata_floor_seal(cipher, $0.baseAddress, $0.count, output.baseAddress) }
        }
        guard status == 1 else { throw PlainFileStore.IOError(description: "AES-256-GCM encryption failed") }
        try files.write(sealed, name: try fileName(key))
    }

    /// Reads the key's file and returns its verified plaintext, or `nil` when there is none.
    func read(key: String) throws -> Data? {
        guard var sealed = try files.read(name: try fileName(key)) else { return nil }
        let count = sealed.count
        // Decrypted in place: the plaintext is the buffer's first `count - 28` bytes, so no second copy.
        let status = sealed.withUnsafeMutableBytes { strata_floor_open(cipher, $0.baseAddress, count, $0.baseAddress) }
        guard status == 1 else { throw PlainFileStore.IOError(description: "AES-256-GCM verification failed") }
        sealed.removeLast(Int(STRATA_FLOOR_OVERHEAD))
        return sealed
    }

    private func fileName(_ key: String) throws -> String {
        var key = key
        var status: Int32 = 0
        let name = String(unsafeUninitializedCapacity: 64) { output in
            status = key.withUTF8 { strata_floor_file_name(cipher, $0.baseAddress, $0.count, output.baseAddress) }
            return status == 1 ? 64 : 0
        }
        guard status == 1 else { throw PlainFileStore.IOError(description: "HMAC-SHA-256 failed") }
        return name
    }
    #else
    static func open(in directory: URL) throws -> FloorStore? { nil }
    func write(_ value: Data, key: String) throws {}
    func read(key: String) throws -> Data? { nil }
    #endif
}
