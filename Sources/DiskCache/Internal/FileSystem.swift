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
    /// Why, when `errno` does not say it (a foreign item: "a FIFO, not a regular file").
    var detail: String? = nil

    /// The error for a foreign item met where the store expects a regular file.
    static func notRegularFile(_ status: FileStatus, operation: String, path: String) -> FileError {
        FileError(errno: EINVAL, operation: operation, path: path, detail: "\(status.kind), not a regular file")
    }

    /// Whether the file or one of its folders does not exist.
    /// (Names are resolved one component at a time relative to a folder descriptor, so `ENOTDIR` means a
    /// foreign item where a folder belongs, not an absent one; see ``isForeignItem``.)
    var isNotFound: Bool { errno == ENOENT }

    /// Whether `error` is a `FileError` for an absent file or folder.
    static func isNotFound(_ error: any Error) -> Bool { (error as? FileError)?.isNotFound == true }

    /// The `errno` of `error` when it is a `FileError`.
    static func code(of error: any Error) -> Int32? { (error as? FileError)?.errno }

    /// The public error for this failure.
    var cacheError: CacheError {
        guard let detail else { return CacheError.posix(errno, operation, path: path) }
        // The detail alone: it already says what is wrong, and `path` says where.
        return CacheError(.io, detail, path: path)
    }
}

/// What `stat(2)` says about a file, reduced to what the store needs.
struct FileStatus: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modified: timespec
    var isRegularFile: Bool
    var isDirectory: Bool
    /// What kind of file this is, in words, for messages about foreign items ("a symbolic link").
    var kind: String

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
        let type = info.st_mode & S_IFMT
        isRegularFile = type == S_IFREG
        isDirectory = type == S_IFDIR
        switch type {
        case S_IFREG: kind = "a regular file"
        case S_IFDIR: kind = "a folder"
        case S_IFLNK: kind = "a symbolic link"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR, S_IFBLK: kind = "a device"
        default: kind = "a special file"
        }
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

    /// Reads the whole regular file open at `fd`, described by `status`, into a buffer that is not
    /// zero-filled first. The caller has checked `status.size` against what the file may hold: the
    /// allocation is `status.size + 1` bytes, never more.
    ///
    /// - Parameter path: For messages only; built when a read fails (building an entry's path on every
    ///   read cost a measurable share of a 4 KiB hit).
    /// - Returns: The buffer and how many bytes were read (less than `status.size` when the file shrank).
    static func readContents(
        _ fd: Int32, status: FileStatus, path: @autoclosure () -> String
    ) throws(FileError) -> (UninitializedBytes, Int) {
        // One extra byte detects a file that grew since fstat; entries never change after the rename.
        let contents = UninitializedBytes(count: status.size + 1)
        let buffer = contents.buffer
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
                throw FileError(errno: errno, operation: "cannot read file", path: path())
            }
        }
        return (contents, total)
    }

    /// Reads exactly the `count` bytes of a small file whose size was checked with `fstat`; a file that
    /// changed length meanwhile reads short or long, and the caller's length check rejects it.
    static func readSmallFile(_ fd: Int32, count: Int, path: String) throws(FileError) -> Data {
        try readPrefix(fd, count: count + 1, path: path)
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

    /// Creates the store folder at the caller's `path` and any missing parents, each with owner-only
    /// permissions; an existing folder is not an error. Links in the path are followed: the path is the
    /// caller's choice. Everything below the store folder is created relative to its descriptor.
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
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw FileError(errno: errno, operation: "cannot create folder", path: path)
            }
        default:
            throw FileError(errno: errno, operation: "cannot create folder", path: path)
        }
    }
}
