import CacheCore
import Foundation

/// Why an entry file was judged corrupt (see Docs/DiskFormat.md).
enum CorruptionReason: String, Error {
    case truncated = "truncated or empty file"
    case badMagic = "not a Strata entry (bad magic)"
    case unsupportedVersion = "unknown format version"
    case badHeader = "malformed header"
    case lengthMismatch = "file length does not match the header"
    case oldEpoch = "written under an earlier key epoch (before a removeAll)"
    case authenticationFailed = "authentication failed (tampered, bit-flipped or swapped file)"
    case misplaced = "key inside does not match the file name (misplaced file)"
}

/// The version-1 entry record: a 52-byte header, a 12-byte nonce, the AES-256-GCM ciphertext of
/// key bytes followed by value bytes, and a 16-byte tag. The associated data is the header followed by
/// the file name, so a file moved to another name, re-stamped or re-versioned fails to authenticate.
/// Docs/DiskFormat.md is the specification; keep the two in step.
struct EntryRecord {
    static let magic = Data("STRE".utf8)
    static let version: UInt8 = 1
    static let headerSize = 52
    static let nonceSize = 12
    static let tagSize = 16
    static let overhead = headerSize + nonceSize + tagSize
    /// Keys longer than this are refused (the field is 32 bits; this keeps a hostile header from
    /// asking for gigabytes).
    static let maxKeyLength = 1 << 24

    static let flagHasExpiry: UInt8 = 1 << 0
    static let flagHasCost: UInt8 = 1 << 1

    /// The parsed, not yet authenticated, header.
    struct Header {
        var epochID: UInt64
        var createdAt: Date
        var expiresAt: Date?
        var cost: Int?
        var keyLength: Int
        var valueLength: Int
    }

    var header: Header
    var keyBytes: Data
    var valueBytes: Data

    // MARK: - Writing

    /// Seals a record for the file `fileName`.
    static func seal(
        keyBytes: Data, valueBytes: Data, header: Header, fileName: String, encryptionKey: Data
    ) throws -> Data {
        let headerBytes = encodeHeader(header)
        let nonce = try CryptoBackend.randomBytes(count: nonceSize)
        var plaintext = keyBytes
        plaintext.append(valueBytes)
        let sealed = try CryptoBackend.sealAESGCM(
            key: encryptionKey, nonce: nonce, plaintext: plaintext,
            associatedData: associatedData(header: headerBytes, fileName: fileName))
        var file = Data(capacity: overhead + plaintext.count)
        file.append(headerBytes)
        file.append(nonce)
        file.append(sealed.ciphertext)
        file.append(sealed.tag)
        return file
    }

    static func encodeHeader(_ header: Header) -> Data {
        var flags: UInt8 = 0
        if header.expiresAt != nil { flags |= flagHasExpiry }
        if header.cost != nil { flags |= flagHasCost }
        var data = Data(capacity: headerSize)
        data.append(magic)
        data.append(version)
        data.append(flags)
        data.appendBigEndian(UInt16(0))
        data.appendBigEndian(header.epochID)
        data.appendBigEndian(header.createdAt.timeIntervalSinceReferenceDate.bitPattern)
        data.appendBigEndian((header.expiresAt?.timeIntervalSinceReferenceDate ?? 0).bitPattern)
        data.appendBigEndian(Int64(header.cost ?? 0))
        data.appendBigEndian(UInt32(header.keyLength))
        data.appendBigEndian(UInt64(header.valueLength))
        return data
    }

    static func associatedData(header: Data, fileName: String) -> Data {
        var data = header
        data.append(contentsOf: fileName.utf8)
        return data
    }

    // MARK: - Reading

    /// Parses and checks the header of `file` without decrypting anything.
    static func parseHeader(_ file: Data) -> Result<Header, CorruptionReason> {
        guard file.count >= headerSize else { return .failure(.truncated) }
        guard file.prefix(4) == magic else { return .failure(.badMagic) }
        guard file[file.startIndex + 4] == version else { return .failure(.unsupportedVersion) }
        let flags = file[file.startIndex + 5]
        guard flags & ~(flagHasExpiry | flagHasCost) == 0, file.readBigEndian(UInt16.self, at: 6) == 0 else {
            return .failure(.badHeader)
        }
        let created = Double(bitPattern: file.readBigEndian(UInt64.self, at: 16))
        let expires = Double(bitPattern: file.readBigEndian(UInt64.self, at: 24))
        let cost = file.readBigEndian(Int64.self, at: 32)
        let keyLength = Int(file.readBigEndian(UInt32.self, at: 40))
        let valueLength = file.readBigEndian(UInt64.self, at: 44)
        guard created.isFinite, expires.isFinite, keyLength <= maxKeyLength, valueLength <= UInt64(Int.max / 2)
        else { return .failure(.badHeader) }
        let header = Header(
            epochID: file.readBigEndian(UInt64.self, at: 8),
            createdAt: Date(timeIntervalSinceReferenceDate: created),
            expiresAt: flags & flagHasExpiry != 0 ? Date(timeIntervalSinceReferenceDate: expires) : nil,
            cost: flags & flagHasCost != 0 ? Int(cost) : nil,
            keyLength: keyLength,
            valueLength: Int(valueLength))
        return .success(header)
    }

    /// Parses, authenticates and decrypts `file`, which was read from `fileName`.
    ///
    /// - Returns: The record, or why it is corrupt. An epoch mismatch is reported before decryption as
    ///   ``CorruptionReason/oldEpoch`` so the caller can refresh its epoch and retry.
    /// - Throws: Only back-end failures other than authentication (``CacheError/Code/crypto``).
    static func open(
        _ file: Data, fileName: String, epochID: UInt64, encryptionKey: Data
    ) throws -> Result<EntryRecord, CorruptionReason> {
        let header: Header
        switch parseHeader(file) {
        case .success(let parsed): header = parsed
        case .failure(let reason): return .failure(reason)
        }
        let bodyLength = header.keyLength + header.valueLength
        guard file.count == overhead + bodyLength else {
            return .failure(file.count < overhead + bodyLength ? .truncated : .lengthMismatch)
        }
        guard header.epochID == epochID else { return .failure(.oldEpoch) }
        let plaintext: Data
        do {
            plaintext = try CryptoBackend.openAESGCM(
                key: encryptionKey,
                nonce: file.bytes(at: headerSize, count: nonceSize),
                ciphertext: file.slice(at: headerSize + nonceSize, count: bodyLength),
                tag: file.bytes(at: headerSize + nonceSize + bodyLength, count: tagSize),
                associatedData: associatedData(header: file.bytes(at: 0, count: headerSize), fileName: fileName))
        } catch CryptoFailure.authenticationFailed {
            return .failure(.authenticationFailed)
        } catch {
            throw CacheError(.crypto, "cannot decrypt entry", path: fileName, cause: error)
        }
        guard plaintext.count == bodyLength else { return .failure(.authenticationFailed) }
        return .success(
            EntryRecord(
                header: header,
                keyBytes: plaintext.bytes(at: 0, count: header.keyLength),
                valueBytes: plaintext.bytes(at: header.keyLength, count: header.valueLength)))
    }
}
