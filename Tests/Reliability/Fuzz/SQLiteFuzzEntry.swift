import DiskCache
import Foundation

/// The damaged-database fuzz target (`STRATA_FUZZ_TARGET=sqlite`, Docs/Reliability.md): a SQLite store
/// built from the input is opened, every seed key read and verified; opening must return or throw, never
/// crash or hang, and a value read must be exactly the one the seed stored for that key.
///
/// The input is a store's two files: two bytes (big-endian) giving the length of the key-check record
/// `store.check`, the record, then the database `store.sqlite`. The seeds (``SeedCorpus/writeSQLite(to:)``)
/// are small valid stores under ``SQLiteFuzz/masterKey``; mutations damage either file.
///
/// - Returns: Whether the store opened and at least one key read as its value.
@discardableResult
func fuzzSQLite(_ input: Data) -> Bool {
    let bytes = [UInt8](input)
    guard bytes.count >= 2 else { return false }
    let checkLength = min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2)
    let folder = SQLiteFuzz.folder
    try? FileManager.default.removeItem(at: folder)
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(bytes[2..<(2 + checkLength)]).write(to: folder.appendingPathComponent("store.check"))
        try Data(bytes[(2 + checkLength)...]).write(to: folder.appendingPathComponent("store.sqlite"))
    } catch {
        fatalError("cannot write the fuzz store in \(folder.path): \(error)")
    }
    guard let cache = try? SQLiteFuzz.open(folder) else { return false }
    var read = 0
    for index in 0..<SQLiteFuzz.keyCount {
        let key = SQLiteFuzz.key(index)
        guard let value = try? cache.value(forKey: key) else { continue }
        // Not a fuzzing failure the bytes could excuse: the engine returned a value it never stored.
        guard value == SQLiteFuzz.value(forKey: key) else { fatalError("\(key) read a wrong value (\(value.count) B)") }
        read += 1
    }
    _ = try? cache.verify()
    return read > 0
}

/// The fixture the SQLite target and its seeds share.
enum SQLiteFuzz {
    /// The master key of every seed store: 32 fixed bytes.
    static let masterKey = Data((0..<32).map { UInt8(0x5C ^ $0) })
    /// How many keys a seed may hold, and the target reads.
    static let keyCount = 8

    /// One folder per process, emptied before every input.
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "strata-fuzz-sqlite-\(ProcessInfo.processInfo.processIdentifier)")

    static func key(_ index: Int) -> String { "fuzz-\(index)" }

    /// The only value a seed ever stores for `key`: its name repeated, 100 B to a few KiB (some overflow a
    /// database page).
    static func value(forKey key: String) -> Data {
        let repeats = 10 + (key.utf8.last.map(Int.init) ?? 0) % 8 * 90
        return Data(String(repeating: key + ";", count: repeats).utf8)
    }

    static func open(_ folder: URL) throws -> DiskCache<String, Data> {
        try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "fuzz", directory: folder, masterKeySource: .masterKey(masterKey), engine: .sqlite),
            codec: .data)
    }
}
