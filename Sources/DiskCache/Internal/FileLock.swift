#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An advisory `flock(2)` lock on a file, released by ``unlock()``, on deinit, or when the process exits.
///
/// `flock` locks belong to an open file description, so two opens in one process exclude each other
/// just as two processes do.
final class FileLock {
    private var fd: Int32

    /// Takes the exclusive lock on the file `name` in `folder`, waiting for it when `wait` is `true`.
    ///
    /// The file is opened like every store file (Directory.swift): without following a link and without
    /// blocking, and it must be a regular file.
    ///
    /// - Parameter creating: Whether to create the lock file when it does not exist (otherwise that is
    ///   a not-found error).
    /// - Returns: The held lock, or `nil` when `wait` is `false` and another holder has it.
    /// - Throws: `FileError`; ``FileError/notRegularFile(_:operation:path:)`` (or `ELOOP`) for a foreign
    ///   item at the name.
    static func acquire(
        _ name: String, in folder: Directory, wait: Bool, creating: Bool = true
    ) throws(FileError)
        -> FileLock?
    {
        let fd = try folder.openFile(name, O_RDWR | (creating ? O_CREAT : 0), mode: 0o600)
        do throws(FileError) {
            let status = try FileSystem.status(of: fd, path: folder.path + "/" + name)
            guard status.isRegularFile else {
                throw FileError.notRegularFile(status, operation: "cannot lock file", path: folder.path + "/" + name)
            }
        } catch {
            FileSystem.closeFile(fd)
            throw error
        }
        while true {
            if flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return FileLock(fd: fd) }
            let code = errno
            if code == EINTR { continue }
            FileSystem.closeFile(fd)
            if code == EWOULDBLOCK { return nil }
            throw FileError(errno: code, operation: "cannot lock file", path: folder.path + "/" + name)
        }
    }

    private init(fd: Int32) { self.fd = fd }

    /// Releases the lock; later calls do nothing.
    func unlock() {
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_UN)
        FileSystem.closeFile(fd)
        fd = -1
    }

    deinit { unlock() }
}
