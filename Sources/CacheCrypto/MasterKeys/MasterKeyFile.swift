import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a tier does to a key file's open descriptor before the master key is read from or written to it
/// (DiskCache gives it a Data Protection class on Apple platforms). `path` is for messages only.
package typealias MasterKeyFileProtection = (_ descriptor: Int32, _ path: String) throws -> Void

/// POSIX reading and race-safe creation of a master-key file: 32 raw bytes, mode 0600, in a 0700 folder.
///
/// POSIX calls rather than `FileManager` because the guarantees matter here: the mode is checked on the
/// open descriptor (no check-then-open race), the new file is complete before its name appears (`link`),
/// and an existing key is never overwritten (`link` and `O_EXCL` fail with `EEXIST`).
package enum MasterKeyFile {
    /// The permission bits a key file must not have: any access by group or others.
    package static let forbiddenModeBits: mode_t = 0o077

    // MARK: - Reading

    /// Reads the master key at `path`, and runs `protection` on the descriptor the key was read from, so a
    /// protection class lands on the very file whose checks passed.
    ///
    /// - Returns: The key, or `nil` when no file exists at `path`.
    /// A symbolic link to an existing key file is followed (the checks apply to the file it points to).
    ///
    /// - Throws: `CacheError` `.invalidMasterKey` when the file is not a regular file, is open to group or others,
    ///   is not exactly 32 bytes, or is a symbolic link to a missing file; `.permissionDenied` or `.io` when
    ///   it cannot be opened or read.
    package static func readKey(
        at path: String, protection: MasterKeyFileProtection? = nil
    ) throws -> MasterKey? {
        // O_NONBLOCK: a FIFO planted at the path must not hang the open; fstat then rejects it as not a regular file.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            let error = errno
            if error == ENOENT {
                if let target = danglingLinkTarget(at: path) {
                    // Creating a key through the link would put it wherever the link points, unseen by the
                    // user; and `link(2)` cannot replace the link, so creation would never succeed either.
                    throw CacheError(
                        .invalidMasterKey,
                        "the master key file is a symbolic link to a missing file (\(target)); restore the file it "
                            + "points to, or remove the link: a new master key is then created for a folder that holds "
                            + "no store yet (a store sealed under the old one must be removed too)",
                        path: path)
                }
                return nil
            }
            throw CacheError.posix(error, "cannot open the key file", path: path)
        }
        defer { close(descriptor) }

        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CacheError.posix(errno, "cannot inspect the key file", path: path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CacheError(
                .invalidMasterKey, "the key file is not a regular file; give the path of a key file", path: path)
        }
        let mode = status.st_mode & 0o7777
        guard mode & forbiddenModeBits == 0 else {
            throw CacheError(
                .invalidMasterKey,
                "the key file is accessible to group or others (mode \(octal(mode))); a key must be private to "
                    + "its owner: run `chmod 600 '\(path)'`, and consider the key exposed if others could read it",
                path: path)
        }
        guard status.st_size == MasterKey.byteCount else {
            throw sizeError(byteCount: Int(status.st_size), path: path)
        }

        // One byte more than a key, to notice a file that grew between fstat and read.
        var buffer = [UInt8](repeating: 0, count: MasterKey.byteCount + 1)
        defer { buffer.withUnsafeMutableBytes { secureZero($0) } }
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { bytes in
                read(descriptor, bytes.baseAddress.map { $0 + total }, bytes.count - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw CacheError.posix(errno, "cannot read the key file", path: path)
            }
            if count == 0 { break }
            total += count
        }
        guard total == MasterKey.byteCount else { throw sizeError(byteCount: total, path: path) }
        let key = try MasterKey(bytes: Data(buffer[0..<total]))
        if let protection { try protection(descriptor, path) }
        return key
    }

    /// The target of a symbolic link at `path`, when `path` is one (its target, or a link in the chain,
    /// being missing); `nil` when nothing is at `path`.
    private static func danglingLinkTarget(at path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return "target unknown" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Creating

    /// Creates the key file at `path` holding `key`, unless a key file appears there first.
    ///
    /// The key is written to a private temporary file in the same folder, flushed, and hard-linked to
    /// `path`; `link` fails with `EEXIST` when another thread or process won the race, and this caller
    /// then reads the winner's key. The temporary name is always removed.
    ///
    /// `protection` runs on the new file's descriptor before the key is written.
    ///
    /// - Returns: `true` when this call created the file; `false` when one already existed.
    /// - Throws: `CacheError` `.permissionDenied`, `.readOnly`, `.outOfSpace` or `.io` when the folder or
    ///   file cannot be created or written.
    package static func createKey(
        at path: String, containing key: MasterKey, protection: MasterKeyFileProtection? = nil
    ) throws -> Bool {
        let fileURL = URL(fileURLWithPath: path, isDirectory: false)
        let folder = fileURL.deletingLastPathComponent().path
        try makeFolder(at: folder)

        let suffix = try CryptoBackend.randomBytes(count: 8).map { String($0, radix: 16) }.joined()
        let temporaryPath = folder + "/." + fileURL.lastPathComponent + "." + suffix + ".tmp"
        try writeFlushed(key, to: temporaryPath, protection: protection)
        defer { unlink(temporaryPath) }

        if link(temporaryPath, path) == 0 {
            syncFolder(at: folder)
            return true
        }
        let error = errno
        switch error {
        case EEXIST:
            return false
        case EPERM, EXDEV, EMLINK, ENOSYS, EOPNOTSUPP, ENOTSUP:
            // No hard links on this file system: fall back to creating the name itself exclusively. ENOTSUP and
            // EOPNOTSUPP are one value on Linux (95) and two on Darwin (45 and 102; FAT and SMB volumes there
            // answer `link` with ENOTSUP), so both are listed.
            do {
                try writeFlushed(key, to: path, protection: protection)
            } catch let failure as CacheError where failure.cause.map(isExists) ?? false {
                return false
            }
            syncFolder(at: folder)
            return true
        default:
            throw CacheError.posix(error, "cannot create the key file", path: path)
        }
    }

    /// Creates `path` (which must not exist) with mode 0600, runs `protection` on it, and writes
    /// `key` to it, flushed to disk.
    private static func writeFlushed(
        _ key: MasterKey, to path: String, protection: MasterKeyFileProtection?
    ) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CacheError.posix(errno, "cannot create the key file", path: path) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        do {
            // The umask may have removed bits from 0600; the file must end up exactly owner read-write.
            guard fchmod(descriptor, 0o600) == 0 else {
                throw CacheError.posix(errno, "cannot set the key file's permissions", path: path)
            }
            if let protection { try protection(descriptor, path) }
            try key.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw CacheError.posix(errno, "cannot write the key file", path: path)
                    }
                    offset += count
                }
            }
            guard fullSync(descriptor) == 0 else {
                throw CacheError.posix(errno, "cannot flush the key file", path: path)
            }
            closed = true
            guard close(descriptor) == 0 else {
                throw CacheError.posix(errno, "cannot close the key file", path: path)
            }
        } catch {
            unlink(path)
            throw error
        }
    }

    // MARK: - Folders

    /// Creates `path` and any missing parents with mode 0700; existing folders are left as they are.
    ///
    /// - Throws: `CacheError` `.io` when a component exists and is not a folder; `.permissionDenied`,
    ///   `.readOnly` or `.io` when `mkdir` fails.
    package static func makeFolder(at path: String) throws {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw CacheError(.io, "cannot create the key folder: a file is in the way", path: path)
            }
            return
        }
        guard errno == ENOENT else { throw CacheError.posix(errno, "cannot inspect the key folder", path: path) }
        let parent = URL(fileURLWithPath: path, isDirectory: true).deletingLastPathComponent().path
        if parent != path, !parent.isEmpty {
            try makeFolder(at: parent)
        }
        if mkdir(path, 0o700) != 0 {
            let error = errno
            // Another creator made it in the meantime: fine, as long as it is a folder.
            if error == EEXIST, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return }
            throw CacheError.posix(error, "cannot create the key folder", path: path)
        }
        // The umask may have removed bits from 0700 (harmless) but never adds any; state it exactly anyway.
        _ = chmod(path, 0o700)
    }

    /// Flushes a folder's entries so a new name survives a crash; best effort, as not every file system
    /// allows opening a folder for `fsync`.
    private static func syncFolder(at path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fullSync(descriptor)
        close(descriptor)
    }

    // MARK: - Messages

    private static func sizeError(byteCount: Int, path: String) -> CacheError {
        CacheError(
            .invalidMasterKey,
            "the key file holds \(byteCount) bytes, but a key file holds exactly \(MasterKey.byteCount) raw bytes; "
                + "restore the right file; to start over, delete it and the stores it opens (their entries are lost)",
            path: path)
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }

    private static func isExists(_ error: any Error) -> Bool {
        (error as? POSIXError)?.code == .EEXIST
    }
}
