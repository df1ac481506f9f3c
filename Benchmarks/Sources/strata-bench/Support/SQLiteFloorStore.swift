import Foundation

#if canImport(CBenchFloor)
import CBenchFloor
#endif

/// The sealed-row floor: what any cache that seals each entry into a row of one SQLite database must do,
/// under the rules DiskCache's SQLite engine keeps (WAL, `synchronous=NORMAL`, no memory map, one autocommit
/// statement per operation), called straight through SQLite and libcrypto (CBenchFloor/SQLiteFloor.c) with no
/// Strata code: HMAC-SHA-256 row name, AES-256-GCM seal or open, one `INSERT OR REPLACE` or `SELECT`.
///
/// No expiry, epoch, tags, statistics or recency, one b-tree search per get. When this alone stays below a
/// target's speed-up over python-diskcache, the target is out of reach of that design by better code.
/// `nil` from ``open(in:)`` where it is not built (Apple platforms).
///
/// Not thread-safe: one store per thread.
final class SQLiteFloorStore {
    #if canImport(CBenchFloor)
    private let cipher: OpaquePointer
    private let floor: OpaquePointer
    private var scratch: [UInt8] = []

    private init(cipher: OpaquePointer, floor: OpaquePointer) {
        self.cipher = cipher
        self.floor = floor
    }

    deinit {
        strata_sqlite_floor_close(floor)
        strata_floor_cipher_free(cipher)
    }

    /// A database in `directory`, keyed with fixed keys (the floor measures the work, not key management).
    static func open(in directory: URL) throws -> SQLiteFloorStore? {
        let encryptionKey = [UInt8](DiskFixture.masterKey)
        let namingKey = encryptionKey.map { $0 ^ 0x5C }
        guard let cipher = strata_floor_cipher_create(encryptionKey, namingKey) else {
            throw PlainFileStore.IOError(description: "libcrypto could not set up AES-256-GCM and HMAC-SHA-256")
        }
        let path = directory.appendingPathComponent("floor.sqlite").path
        guard let floor = strata_sqlite_floor_open(path, cipher) else {
            strata_floor_cipher_free(cipher)
            throw PlainFileStore.IOError(description: "SQLite could not open the floor's database at \(path)")
        }
        return SQLiteFloorStore(cipher: cipher, floor: floor)
    }

    /// Seals `value` into the key's row.
    func write(_ value: Data, key: String) throws {
        var key = key
        let stored = key.withUTF8 { name in
            value.withUnsafeBytes {
                strata_sqlite_floor_set(floor, name.baseAddress, name.count, $0.baseAddress, $0.count)
            }
        }
        guard stored == 1 else { throw PlainFileStore.IOError(description: "the floor could not store a row") }
    }

    /// The key's verified plaintext, or `nil` when it has no row; `capacity` bounds the value's size in bytes.
    func read(key: String, capacity: Int) throws -> Data? {
        var key = key
        // Opened into a buffer kept between reads, then copied out at its length: a fresh zero-filled buffer
        // of `capacity` bytes per get was work no store does.
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
        let floor = floor
        let (length, value) = key.withUTF8 { name in
            scratch.withUnsafeMutableBytes { buffer -> (Int, Data?) in
                let length = strata_sqlite_floor_get(floor, name.baseAddress, name.count, buffer.baseAddress, capacity)
                guard length >= 0, let bytes = buffer.baseAddress else { return (length, nil) }
                return (length, Data(bytes: bytes, count: length))
            }
        }
        if length == -1 { return nil }
        guard let value else { throw PlainFileStore.IOError(description: "the floor could not read a row") }
        return value
    }
    #else
    static func open(in directory: URL) throws -> SQLiteFloorStore? { nil }
    func write(_ value: Data, key: String) throws {}
    func read(key: String, capacity: Int) throws -> Data? { nil }
    #endif
}
