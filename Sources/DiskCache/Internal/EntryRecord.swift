import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// The largest key plus value one AES-GCM call seals (`validatePreparedAESGCM`): no entry file is
    /// longer than ``overhead`` plus this, so a longer file is judged before anything is allocated.
    static let maxBodyLength = Int(Int32.max)
    /// Files up to this size are read whole and judged after; a larger one has its header read and its
    /// length checked against the header first, so no large buffer is allocated for a file whose header
    /// does not fix exactly its size. Also the piece size of a streamed write.
    static let chunkSize = 1 << 20

    static let flagHasExpiry: UInt8 = 1 << 0
    static let flagHasCost: UInt8 = 1 << 1
    /// Bytes 6–7 hold the stale retention (how long past its expiry the entry is kept for loads that may
    /// serve it stale), in seconds; with ``flagStaleInMinutes`` too, in minutes. Needs ``flagHasExpiry``.
    static let flagHasStaleness: UInt8 = 1 << 2
    static let flagStaleInMinutes: UInt8 = 1 << 3
    /// The value bytes start with a tag block (the kernel's `TagBlock`, Sources/SealedRecord): the entry's tags
    /// and the versions they were stamped with, inside the ciphertext. Records without tags keep this bit clear and are unchanged.
    static let flagHasTags: UInt8 = 1 << 4
    /// The longest stale retention the header holds: 65 535 minutes (about 45 days).
    static let maximumStaleRetention = TimeInterval(UInt16.max) * 60

    /// The parsed, not yet authenticated, header.
    struct Header {
        var epochID: UInt64
        var createdAt: Date
        var expiresAt: Date?
        var cost: Int?
        var keyLength: Int
        var valueLength: Int
        /// Until when the entry is kept past ``expiresAt`` for loads that may serve it stale, or `nil`.
        var staleUntil: Date? = nil
        /// Whether the value bytes start with a tag block.
        var hasTags = false

        /// What the header says about the record's life, for the kernel's liveness verdict; `tagVersions` are
        /// the stamps of its tag block once opened (none for a header-only judgement).
        func stamp(tagVersions: [String: UInt64] = [:]) -> RecordStamp {
            RecordStamp(epoch: epochID, expiresAt: expiresAt, staleUntil: staleUntil, tagVersions: tagVersions)
        }

        /// ``staleUntil`` as a reader of the encoded header finds it (the retention rounded up to whole seconds
        /// or minutes), `nil` without a stale window.
        var storedStaleUntil: Date? {
            guard let expiresAt, let staleness = encodedStaleness else { return nil }
            return expiresAt.addingTimeInterval(TimeInterval(staleness.count) * (staleness.inMinutes ? 60 : 1))
        }

        /// The stale retention as the header stores it: a count of seconds, or of minutes (rounded up, at
        /// most ``EntryRecord/maximumStaleRetention``) when seconds do not fit 16 bits; `nil` for none.
        var encodedStaleness: (count: UInt16, inMinutes: Bool)? {
            guard let expiresAt, let staleUntil else { return nil }
            let seconds = staleUntil.timeIntervalSince(expiresAt).rounded(.up)
            guard seconds >= 1 else { return nil }
            if seconds <= TimeInterval(UInt16.max) { return (UInt16(seconds), false) }
            return (UInt16(min((seconds / 60).rounded(.up), TimeInterval(UInt16.max))), true)
        }
    }

    var header: Header
    var keyBytes: Data
    /// The value's bytes; for a tagged record, once ``DiskStore`` has checked its tags, without the tag block.
    var valueBytes: Data
    /// The tags of a tagged record whose versions were found current; empty otherwise.
    var tags: Set<String> = []

    // MARK: - Writing

    /// Seals a record for the file `fileName` and calls `body` with the file's bytes, which live only
    /// for the call.
    ///
    /// The file is built in one buffer: the header is encoded into it, the nonce drawn into it, and the
    /// key and value encrypted straight into it, so the plaintext is never concatenated or copied.
    static func seal<R>(
        keyBytes: Data, valueBytes: Data, header: Header, fileName: String, key: any PreparedAESGCMSubkey,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        try seal(
            keyBytes: keyBytes, valueBytes: valueBytes, header: header, binding: .entryFile(name: fileName), key: key,
            body)
    }

    /// Seals a record bound to `binding` (a file engine's entry file, a SQLite engine's row) and calls `body`
    /// with its bytes, which live only for the call.
    static func seal<R>(
        keyBytes: Data, valueBytes: Data, header: Header, binding: RecordBinding, key: any PreparedAESGCMSubkey,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        let bodyLength = keyBytes.count + valueBytes.count
        let file = UnsafeMutableRawBufferPointer.allocate(byteCount: overhead + bodyLength, alignment: 16)
        defer { file.deallocate() }
        encodeHeader(header, into: UnsafeMutableRawBufferPointer(rebasing: file[0..<headerSize]))
        let nonce = UnsafeMutableRawBufferPointer(rebasing: file[headerSize..<headerSize + nonceSize])
        try CryptoBackend.fillRandom(nonce)
        let ciphertextStart = headerSize + nonceSize
        try binding.withAssociatedData(header: UnsafeRawBufferPointer(rebasing: file[0..<headerSize])) {
            associatedData in
            try keyBytes.withUnsafeBytes { keyPart in
                try valueBytes.withUnsafeBytes { valuePart in
                    try key.seal(
                        nonce: UnsafeRawBufferPointer(nonce), associatedData: associatedData,
                        first: keyPart, second: valuePart,
                        ciphertext: UnsafeMutableRawBufferPointer(
                            rebasing: file[ciphertextStart..<ciphertextStart + bodyLength]),
                        tag: UnsafeMutableRawBufferPointer(rebasing: file[(ciphertextStart + bodyLength)...]))
                }
            }
        }
        return try body(UnsafeRawBufferPointer(file))
    }

    /// Seals a record for `fileName` and writes it to `fd`: a small one from one buffer in one write, a
    /// large one (over ``chunkSize`` of key and value) streamed in pieces of ``chunkSize`` bytes, so the
    /// value is never held twice. Both produce the same bytes (Docs/DiskFormat.md).
    static func write(
        keyBytes: Data, valueBytes: Data, header: Header, fileName: String, key: any PreparedAESGCMSubkey,
        to fd: Int32, path: String
    ) throws {
        try write(
            keyBytes: keyBytes, valueBytes: valueBytes, header: header, binding: .entryFile(name: fileName), key: key,
            to: fd, path: path)
    }

    /// ``write(keyBytes:valueBytes:header:fileName:key:to:path:)`` for a record bound to `binding`.
    static func write(
        keyBytes: Data, valueBytes: Data, header: Header, binding: RecordBinding, key: any PreparedAESGCMSubkey,
        to fd: Int32, path: String
    ) throws {
        guard keyBytes.count + valueBytes.count > chunkSize else {
            try seal(keyBytes: keyBytes, valueBytes: valueBytes, header: header, binding: binding, key: key) {
                try FileSystem.writeAll(fd, $0, path: path)
            }
            return
        }
        try withUnsafeTemporaryAllocation(byteCount: headerSize + nonceSize + tagSize, alignment: 16) { buffer in
            let prefix = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<headerSize + nonceSize])
            let headerBytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<headerSize])
            let nonce = UnsafeMutableRawBufferPointer(rebasing: buffer[headerSize..<headerSize + nonceSize])
            let tag = UnsafeMutableRawBufferPointer(rebasing: buffer[(headerSize + nonceSize)...])
            encodeHeader(header, into: headerBytes)
            try CryptoBackend.fillRandom(nonce)
            try FileSystem.writeAll(fd, UnsafeRawBufferPointer(prefix), path: path)
            try binding.withAssociatedData(header: UnsafeRawBufferPointer(headerBytes)) { associatedData in
                try keyBytes.withUnsafeBytes { keyPart in
                    try valueBytes.withUnsafeBytes { valuePart in
                        try key.seal(
                            nonce: UnsafeRawBufferPointer(nonce), associatedData: associatedData, first: keyPart,
                            second: valuePart, chunkSize: chunkSize,
                            output: { try FileSystem.writeAll(fd, $0, path: path) }, tag: tag)
                    }
                }
            }
            try FileSystem.writeAll(fd, UnsafeRawBufferPointer(tag), path: path)
        }
    }

    /// Writes the 52-byte header into `output` (exactly ``headerSize`` bytes).
    static func encodeHeader(_ header: Header, into output: UnsafeMutableRawBufferPointer) {
        var flags: UInt8 = 0
        if header.expiresAt != nil { flags |= flagHasExpiry }
        if header.cost != nil { flags |= flagHasCost }
        let staleness = header.encodedStaleness
        if let staleness { flags |= flagHasStaleness | (staleness.inMinutes ? flagStaleInMinutes : 0) }
        if header.hasTags { flags |= flagHasTags }
        output.copyBytes(from: magic)
        output[4] = version
        output[5] = flags
        output.storeBytes(of: (staleness?.count ?? 0).bigEndian, toByteOffset: 6, as: UInt16.self)
        output.storeBytes(of: header.epochID.bigEndian, toByteOffset: 8, as: UInt64.self)
        output.storeBytes(
            of: header.createdAt.timeIntervalSinceReferenceDate.bitPattern.bigEndian, toByteOffset: 16, as: UInt64.self)
        output.storeBytes(
            of: (header.expiresAt?.timeIntervalSinceReferenceDate ?? 0).bitPattern.bigEndian, toByteOffset: 24,
            as: UInt64.self)
        output.storeBytes(of: Int64(header.cost ?? 0).bigEndian, toByteOffset: 32, as: Int64.self)
        output.storeBytes(of: UInt32(header.keyLength).bigEndian, toByteOffset: 40, as: UInt32.self)
        output.storeBytes(of: UInt64(header.valueLength).bigEndian, toByteOffset: 44, as: UInt64.self)
    }

    /// Calls `body` with the associated data: the header followed by the file name's UTF-8 bytes, built by
    /// the kernel's one builder (`RecordBinding.entryFile`) in a temporary buffer.
    static func withAssociatedData<R>(
        header: UnsafeRawBufferPointer, fileName: String, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try RecordBinding.entryFile(name: fileName).withAssociatedData(header: header, body)
    }

    // MARK: - Reading

    /// Parses and checks the header of `file` without decrypting anything.
    static func parseHeader(_ file: Data) -> Result<Header, CorruptionReason> {
        file.withUnsafeBytes { parseHeader($0) }
    }

    /// Parses and checks the header at the start of `file` without decrypting anything.
    static func parseHeader(_ file: UnsafeRawBufferPointer) -> Result<Header, CorruptionReason> {
        guard file.count >= headerSize else { return .failure(.truncated) }
        guard file[0] == 0x53, file[1] == 0x54, file[2] == 0x52, file[3] == 0x45 else { return .failure(.badMagic) }
        guard file[4] == version else { return .failure(.unsupportedVersion) }
        let flags = file[5]
        func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            T(bigEndian: file.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let staleCount = load(UInt16.self, at: 6)
        let hasStaleness = flags & flagHasStaleness != 0
        // Bytes 6–7 were reserved (zero) before stale retention; a record without the flag still needs them zero.
        guard flags & ~(flagHasExpiry | flagHasCost | flagHasStaleness | flagStaleInMinutes | flagHasTags) == 0,
            hasStaleness
                ? (staleCount != 0 && flags & flagHasExpiry != 0) : (staleCount == 0 && flags & flagStaleInMinutes == 0)
        else {
            return .failure(.badHeader)
        }
        let created = Double(bitPattern: load(UInt64.self, at: 16))
        let expires = Double(bitPattern: load(UInt64.self, at: 24))
        let cost = load(Int64.self, at: 32)
        let keyLength = Int(load(UInt32.self, at: 40))
        let valueLength = load(UInt64.self, at: 44)
        guard created.isFinite, expires.isFinite, keyLength <= maxKeyLength, valueLength <= UInt64(Int.max / 2)
        else { return .failure(.badHeader) }
        let expiresAt = flags & flagHasExpiry != 0 ? Date(timeIntervalSinceReferenceDate: expires) : nil
        let retention = TimeInterval(staleCount) * (flags & flagStaleInMinutes != 0 ? 60 : 1)
        let header = Header(
            epochID: load(UInt64.self, at: 8),
            createdAt: Date(timeIntervalSinceReferenceDate: created),
            expiresAt: expiresAt,
            cost: flags & flagHasCost != 0 ? Int(cost) : nil,
            keyLength: keyLength,
            valueLength: Int(valueLength),
            staleUntil: hasStaleness ? expiresAt?.addingTimeInterval(retention) : nil,
            hasTags: flags & flagHasTags != 0)
        return .success(header)
    }

    /// Parses, authenticates and decrypts the `count` bytes of `file`, which were read from `fileName`.
    ///
    /// The value is decrypted in place, inside `file`'s buffer, and handed out as a `Data` that takes
    /// over that buffer: a read holds the value once, not once as ciphertext and once as plaintext. The
    /// key is decrypted into its own small buffer. On failure no plaintext is left in the buffer.
    ///
    /// - Returns: The record, or why it is corrupt. An epoch mismatch is reported before decryption as
    ///   ``CorruptionReason/oldEpoch`` so the caller can refresh its epoch and retry (the buffer is then
    ///   still intact).
    /// - Throws: Only back-end failures other than authentication (``CacheError/Code/crypto``).
    static func open(
        _ file: UninitializedBytes, count: Int, fileName: String, epochID: UInt64, key: any PreparedAESGCMSubkey
    ) throws -> Result<EntryRecord, CorruptionReason> {
        try open(file, count: count, binding: .entryFile(name: fileName), epochID: epochID, key: key)
    }

    /// ``open(_:count:fileName:epochID:key:)`` for a record bound to `binding`.
    static func open(
        _ file: UninitializedBytes, count: Int, binding: RecordBinding, epochID: UInt64, key: any PreparedAESGCMSubkey
    ) throws -> Result<EntryRecord, CorruptionReason> {
        let bytes = UnsafeMutableRawBufferPointer(rebasing: file.buffer[0..<min(count, file.buffer.count)])
        let header: Header
        switch parseHeader(UnsafeRawBufferPointer(bytes)) {
        case .success(let parsed): header = parsed
        case .failure(let reason): return .failure(reason)
        }
        let bodyLength = header.keyLength + header.valueLength
        guard bytes.count == overhead + bodyLength else {
            return .failure(bytes.count < overhead + bodyLength ? .truncated : .lengthMismatch)
        }
        guard header.epochID == epochID else { return .failure(.oldEpoch) }
        let ciphertextStart = headerSize + nonceSize
        let valueStart = ciphertextStart + header.keyLength
        var keyBytes = Data(count: header.keyLength)
        do {
            try binding.withAssociatedData(header: UnsafeRawBufferPointer(rebasing: bytes[0..<headerSize])) {
                associatedData in
                try keyBytes.withUnsafeMutableBytes { keyOutput in
                    // The value's plaintext overwrites its own ciphertext: GCM (a counter mode) allows input
                    // and output to be the same bytes, and the fallback back end copies its input first.
                    try key.open(
                        nonce: UnsafeRawBufferPointer(rebasing: bytes[headerSize..<ciphertextStart]),
                        associatedData: associatedData,
                        ciphertext: UnsafeRawBufferPointer(
                            rebasing: bytes[ciphertextStart..<ciphertextStart + bodyLength]),
                        tag: UnsafeRawBufferPointer(rebasing: bytes[(ciphertextStart + bodyLength)...]),
                        first: keyOutput,
                        second: UnsafeMutableRawBufferPointer(
                            rebasing: bytes[valueStart..<valueStart + header.valueLength]))
                }
            }
        } catch CryptoFailure.authenticationFailed {
            return .failure(.authenticationFailed)
        } catch {
            throw CacheError(.crypto, "cannot decrypt entry", cause: error)
        }
        let value = file.take(valueStart..<valueStart + header.valueLength)
        return .success(EntryRecord(header: header, keyBytes: keyBytes, valueBytes: value))
    }

    /// ``open(_:count:fileName:epochID:key:)`` for bytes in any buffer (copied first; the fuzzer's entry).
    static func open(
        _ file: UnsafeRawBufferPointer, fileName: String, epochID: UInt64, key: any PreparedAESGCMSubkey
    ) throws -> Result<EntryRecord, CorruptionReason> {
        let copy = UninitializedBytes(count: file.count)
        copy.buffer.copyMemory(from: file)
        return try open(copy, count: file.count, fileName: fileName, epochID: epochID, key: key)
    }
}
