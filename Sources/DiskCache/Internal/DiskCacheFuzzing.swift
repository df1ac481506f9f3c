#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Entry points for the decoder fuzzer (`Tests/Reliability/Fuzz`, Docs/Reliability.md): DiskCache's
/// entry-file, key-check and statistics decoders, fed arbitrary bytes under fixed keys.
///
/// `package` access keeps this out of the public API while letting the fuzz target in the same package
/// reach the internal decoders. Every function must return normally for any input: a trap here is a bug
/// in the decoder, since the store reads the same bytes from files anyone with write access could change.
/// The fixture's keys are fixed and public, so nothing here may be used to protect real data.
package enum DiskCacheFuzzing {
    /// The fixed master key, epoch and file name every input is judged under.
    private struct Fixture {
        var master: MasterKey
        var epoch: Epoch
        var fileName: String
        var keyBytes: Data

        init() throws {
            master = try MasterKey(bytes: Data((0..<32).map { UInt8($0) }))
            epoch = try Epoch.derive(master: master, salt: Data(repeating: 0x5A, count: KeyCheckRecord.saltSize))
            keyBytes = Data("fuzz-key".utf8)
            fileName = String(repeating: "ab", count: 32)
        }
    }

    private static let fixture: Fixture? = try? Fixture()

    /// Decodes `bytes` as an entry file, as a read does: parse, authenticate, decrypt, match the key.
    ///
    /// - Parameter bytes: The whole file; any bytes, any length, any `startIndex`.
    /// - Returns: `true` when the record opened and belongs to the fixture's key.
    @discardableResult
    package static func decodeEntry(_ bytes: Data) -> Bool {
        guard let fixture else { return false }
        let outcome = try? bytes.withUnsafeBytes { file in
            try EntryRecord.open(
                file, fileName: fixture.fileName, epochID: fixture.epoch.id, key: fixture.epoch.sealingSubkey)
        }
        guard case .success(let record)? = outcome else { return false }
        return record.keyBytes == fixture.keyBytes
    }

    /// Decodes `bytes` as a key-check record (`store.check`) under the fixture's master key.
    ///
    /// - Parameter bytes: The whole file; any bytes.
    /// - Returns: `true` when the record authenticated and yielded an epoch salt.
    @discardableResult
    package static func decodeKeyCheck(_ bytes: Data) -> Bool {
        guard let fixture else { return false }
        return (try? KeyCheckRecord.salt(from: bytes, master: fixture.master, path: "fuzz", storeName: "fuzz")) != nil
    }

    /// Decodes `bytes` as a statistics file (`store.stats`) and merges the counters as a flush does:
    /// damaged, negative or huge counters must count as zero or saturate, never trap.
    ///
    /// - Parameter bytes: The whole file; any bytes.
    /// - Returns: `true` when the file was clean.
    @discardableResult
    package static func decodeStatistics(_ bytes: Data) -> Bool {
        let (counters, isClean) = StatisticsFile.decode(bytes)
        let pending = StatisticsCounters(hits: 1, misses: .max, insertions: 0, evictions: 3)
        let merged = counters + pending + counters
        let left = merged - pending - counters
        return isClean && left.hits >= 0 && (try? StatisticsFile.encode(merged)) != nil
    }

    /// A clean statistics file, to seed a corpus.
    package static func sampleStatistics() -> Data {
        (try? StatisticsFile.encode(StatisticsCounters(hits: 5, misses: 2, insertions: 7))) ?? Data()
    }

    /// Seals `plaintext` behind `header` exactly as a writer would, so a fuzzer can reach the checks that
    /// run after authentication with headers it made up.
    ///
    /// - Parameters:
    ///   - header: Up to 52 header bytes (shorter is zero-padded); bytes 8..<16 are replaced by the
    ///     fixture's epoch id so the record is not rejected as an old epoch.
    ///   - plaintext: The bytes to encrypt (normally key bytes followed by value bytes).
    /// - Returns: A whole entry file that authenticates under the fixture, or empty data.
    package static func sealEntry(header: Data, plaintext: Data) -> Data {
        guard let fixture else { return Data() }
        var headerBytes = Data(header.prefix(EntryRecord.headerSize))
        headerBytes.append(Data(count: EntryRecord.headerSize - headerBytes.count))
        var epochID = Data()
        epochID.appendBigEndian(fixture.epoch.id)
        headerBytes.replaceSubrange(8..<16, with: epochID)
        let nonce = Data(count: EntryRecord.nonceSize)
        let sealed = try? headerBytes.withUnsafeBytes { header in
            try EntryRecord.withAssociatedData(header: header, fileName: fixture.fileName) { associatedData in
                try CryptoBackend.sealAESGCM(
                    key: fixture.epoch.encryptionSubkey, nonce: nonce, plaintext: plaintext,
                    associatedData: Data(associatedData))
            }
        }
        guard let sealed else { return Data() }
        return headerBytes + nonce + sealed.ciphertext + sealed.tag
    }

    /// A valid entry file for the fixture's key, to seed a corpus.
    ///
    /// - Parameters:
    ///   - value: The value bytes.
    ///   - expiresAt: The expiry to record, or `nil`.
    ///   - cost: The cost to record, or `nil`.
    /// - Returns: The file's bytes, or empty data if the fixture could not be made.
    package static func sampleEntry(value: Data, expiresAt: Date?, cost: Int?) -> Data {
        guard let fixture else { return Data() }
        let header = EntryRecord.Header(
            epochID: fixture.epoch.id, createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000),
            expiresAt: expiresAt, cost: cost, keyLength: fixture.keyBytes.count, valueLength: value.count)
        return
            (try? EntryRecord.seal(
                keyBytes: fixture.keyBytes, valueBytes: value, header: header, fileName: fixture.fileName,
                key: fixture.epoch.sealingSubkey
            ) { Data($0) }) ?? Data()
    }

    /// A valid key-check record for the fixture's master key, to seed a corpus.
    ///
    /// - Returns: The file's bytes, or empty data if the fixture could not be made.
    package static func sampleKeyCheck() -> Data {
        guard let fixture else { return Data() }
        return (try? KeyCheckRecord.make(salt: fixture.epoch.salt, master: fixture.master)) ?? Data()
    }
}
