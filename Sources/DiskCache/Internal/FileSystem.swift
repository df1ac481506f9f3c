import CacheCore
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call, kept with its `errno` so callers can tell "absent" from "broken".
struct FileError: Error {
    var errno: Int32
    var operation: String
    var path: String

    /// Whether the file or one of its folders does not exist.
    var isNotFound: Bool { errno == ENOENT || errno == ENOTDIR }

    /// Whether `error` is a `FileError` for an absent file or folder.
    static func isNotFound(_ error: any Error) -> Bool { (error as? FileError)?.isNotFound == true }

    /// The `errno` of `error` when it is a `FileError`.
    static func code(of error: any Error) -> Int32? { (error as? FileError)?.errno }

    /// The public error for this failure.
    var cacheError: CacheError { CacheError.posix(errno, operation, path: path) }
}

/// What `stat(2)` says about a file, reduced to what the store needs.
struct FileStatus: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modified: timespec
    var isRegularFile: Bool

    /// The modification time as a `Date`.
    var modificationDate: Date { FileTime.date(from: modified) }

    static func == (lhs: FileStatus, rhs: FileStatus) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
    }

    /// Whether both describe the same file (same device and inode), whatever its contents.
    func isSameFile(as other: FileStatus) -> Bool { device == other.device && inode == other.inode }

    init(_ info: stat) {
        // `dev_t` is signed on Darwin; keep the bits rather than trap on a negative value.
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int(info.st_size)
        #if canImport(Darwin)
        modified = info.st_mtimespec
        #else
        modified = info.st_mtim
        #endif
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
    }
}

/// Converts between `Date` and `timespec` the same way in both directions, so a time written with
/// `futimens` and read back with `stat` compares equal to the in-memory copy.
enum FileTime {
    static func spec(from date: Date) -> timespec {
        let interval = date.timeIntervalSince1970
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        return makeTimespec(seconds: seconds, nanoseconds: nanoseconds)
    }

    static func date(from time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// `date` after a round trip through the file system's representation.
    static func normalized(_ date: Date) -> Date { self.date(from: spec(from: date)) }

    private static func makeTimespec(seconds: Double, nanoseconds: Double) -> timespec {
        // Clamp so a far-future or far-past clock cannot trap on the integer conversion.
        let clampedSeconds = min(max(seconds, -1e15), 1e15)
        var time = timespec()
        time.tv_sec = .init(clampedSeconds)
        time.tv_nsec = .init(min(max(nanoseconds, 0), 999_999_999))
        return time
    }
}

/// Thin wrappers over POSIX calls: Foundation on Linux cannot fsync a folder, lock a file, set exact
/// modification times on an open file, or create a file exclusively with a given mode.
enum FileSystem {
    /// Opens `path`, retrying on `EINTR`.
    static func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(FileError) -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw FileError(errno: errno, operation: "cannot open file", path: path) }
        }
    }

    static func closeFile(_ fd: Int32) { _ = close(fd) }

    /// Reads a whole file from `fd`.
    static func readAll(_ fd: Int32, path: String) throws(FileError) -> (data: Data, status: FileStatus) {
        let status = try self.status(of: fd, path: path)
        // One extra byte detects a file that grew since fstat; entries never change after the rename.
        var data = Data(count: status.size + 1)
        var total = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while total < buffer.count {
                let got = read(fd, base + total, buffer.count - total)
                if got > 0 {
                    total += got
                } else if got == 0 {
                    return
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        if failure != 0 { throw FileError(errno: failure, operation: "cannot read file", path: path) }
        data.count = total
        return (data, status)
    }

    /// Reads a whole file from `fd` into a buffer that is not zero-filled first and calls `body` with the
    /// bytes read; the buffer lives only for the call.
    static func withContents<R>(
        of fd: Int32, path: String, _ body: (UnsafeRawBufferPointer, FileStatus) throws -> R
    ) throws -> R {
        let status = try self.status(of: fd, path: path)
        // One extra byte detects a file that grew since fstat; entries never change after the rename.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: status.size + 1, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while total < buffer.count, let base = buffer.baseAddress {
            let requested = buffer.count - total
            let got = read(fd, base + total, requested)
            if got > 0 {
                total += got
                // A read that stops short exactly at fstat's size has met the end of the file, so the
                // extra byte found nothing: a file that had grown would have filled it. Stopping here
                // saves the read that would only return 0 (one system call of seven on a 4 KiB hit).
                if got < requested && total == status.size { break }
            } else if got == 0 {
                break
            } else if errno != EINTR {
                throw FileError(errno: errno, operation: "cannot read file", path: path)
            }
        }
        return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<total]), status)
    }

    /// Reads at most `count` bytes from the start of the file.
    static func readPrefix(_ fd: Int32, count: Int, path: String) throws(FileError) -> Data {
        var data = Data(count: count)
        var total = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while total < count {
                let got = pread(fd, base + total, count - total, off_t(total))
                if got > 0 {
                    total += got
                } else if got == 0 {
                    return
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        if failure != 0 { throw FileError(errno: failure, operation: "cannot read file", path: path) }
        data.count = total
        return data
    }

    /// Writes all of `data` to `fd`.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(FileError) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            let put = write(fd, base + written, buffer.count - written)
            if put >= 0 {
                written += put
            } else if errno != EINTR {
                throw FileError(errno: errno, operation: "cannot write file", path: path)
            }
        }
    }

    static func syncFile(_ fd: Int32, path: String) throws(FileError) {
        if fullSync(fd) != 0 { throw FileError(errno: errno, operation: "cannot fsync", path: path) }
    }

    /// Flushes a folder's entries (a rename is durable only once its folder is synced).
    static func syncDirectory(_ path: String) throws(FileError) {
        let fd = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { closeFile(fd) }
        try syncFile(fd, path: path)
    }

    /// Sets the access and modification times of an open file to `date`.
    static func setTimes(_ fd: Int32, to date: Date, path: String) throws(FileError) {
        let time = FileTime.spec(from: date)
        var times = [time, time]
        if futimens(fd, &times) != 0 {
            throw FileError(errno: errno, operation: "cannot set modification time", path: path)
        }
    }

    static func status(of fd: Int32, path: String) throws(FileError) -> FileStatus {
        var info = stat()
        if fstat(fd, &info) != 0 { throw FileError(errno: errno, operation: "cannot stat file", path: path) }
        return FileStatus(info)
    }

    /// `stat(2)` without following a final symbolic link; `nil` when the file does not exist.
    static func status(atPath path: String) throws(FileError) -> FileStatus? {
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw FileError(errno: code, operation: "cannot stat file", path: path)
        }
        return FileStatus(info)
    }

    static func renameFile(_ source: String, to destination: String) throws(FileError) {
        if rename(source, destination) != 0 {
            throw FileError(errno: errno, operation: "cannot rename file into place", path: destination)
        }
    }

    /// Creates `destination` as a second name of `source`; fails with `EEXIST` instead of replacing.
    static func linkFile(_ source: String, to destination: String) throws(FileError) {
        if link(source, destination) != 0 {
            throw FileError(errno: errno, operation: "cannot link file", path: destination)
        }
    }

    /// Removes a file; an absent file is not an error.
    static func unlinkFile(_ path: String) throws(FileError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw FileError(errno: errno, operation: "cannot remove file", path: path)
        }
    }

    /// Creates a folder with owner-only permissions; an existing folder is not an error.
    static func makeDirectory(_ path: String) throws(FileError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw FileError(errno: errno, operation: "cannot create folder", path: path)
        }
    }

    /// Creates a folder and any missing parents, each with owner-only permissions.
    static func makeDirectories(_ path: String) throws(FileError) {
        if mkdir(path, 0o700) == 0 { return }
        switch errno {
        case EEXIST:
            return
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else {
                throw FileError(errno: ENOENT, operation: "cannot create folder", path: path)
            }
            try makeDirectories(parent)
            try makeDirectory(path)
        default:
            throw FileError(errno: errno, operation: "cannot create folder", path: path)
        }
    }

    /// The names in a folder (without `.` and `..`); an absent folder has none.
    static func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw FileError(errno: errno, operation: "cannot list folder", path: path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

extension FileSystem {
    /// Calls `body` with the name and `fstatat(2)` status (not following symbolic links) of every entry
    /// of a folder; an absent folder has none. Faster than listing and then `lstat`ing full paths,
    /// since the kernel resolves each name relative to the open folder.
    static func forEachFile(in path: String, _ body: (String, FileStatus) -> Void) throws(FileError) {
        guard let dir = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return }
            throw FileError(errno: errno, operation: "cannot list folder", path: path)
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        while let entry = readdir(dir) {
            withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { name in
                    var info = stat()
                    guard name.pointee != 0x2e,  // ".", "..", and hidden files are never entries
                        fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0
                    else { return }
                    body(String(cString: name), FileStatus(info))
                }
            }
        }
    }
}

/// An advisory `flock(2)` lock on a file, released by ``unlock()``, on deinit, or when the process exits.
///
/// `flock` locks belong to an open file description, so two opens in one process exclude each other
/// just as two processes do.
final class FileLock {
    private var fd: Int32

    /// Takes the exclusive lock on `path`, waiting for it when `wait` is `true`.
    ///
    /// - Parameter creating: Whether to create the lock file when it does not exist (otherwise that is
    ///   a not-found error).
    /// - Returns: The held lock, or `nil` when `wait` is `false` and another holder has it.
    static func acquire(_ path: String, wait: Bool, creating: Bool = true) throws(FileError) -> FileLock? {
        let fd = try FileSystem.openFile(path, O_RDWR | (creating ? O_CREAT : 0), mode: 0o600)
        while true {
            if flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return FileLock(fd: fd) }
            let code = errno
            if code == EINTR { continue }
            FileSystem.closeFile(fd)
            if code == EWOULDBLOCK { return nil }
            throw FileError(errno: code, operation: "cannot lock file", path: path)
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
