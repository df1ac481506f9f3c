import CacheCore

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
        let (total, failure) = readLoop(fd, into: contents.buffer, positioned: false, knownSize: status.size)
        if failure != 0 { throw FileError(errno: failure, operation: "cannot read file", path: path()) }
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
        let (total, failure) = data.withUnsafeMutableBytes {
            readLoop(fd, into: $0, positioned: true, knownSize: nil)
        }
        if failure != 0 { throw FileError(errno: failure, operation: "cannot read file", path: path) }
        data.count = total
        return data
    }

    /// The one read loop: reads into `buffer` until it is full or the file ends, retrying on `EINTR`.
    ///
    /// - Parameters:
    ///   - positioned: `pread` at offset 0 onwards (the descriptor's offset is left alone), else `read`.
    ///   - knownSize: The size `fstat` reported, when known: a read that stops short exactly there has met
    ///     the end of the file, so the read that would only return 0 is skipped (one system call of seven on
    ///     a 4 KiB hit). A file that had grown would have filled the buffer's extra byte instead.
    /// - Returns: How many bytes were read, and the `errno` of a failed read (0 when none failed).
    @inline(__always)
    private static func readLoop(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, positioned: Bool, knownSize: Int?
    ) -> (count: Int, failure: Int32) {
        guard let base = buffer.baseAddress else { return (0, 0) }
        var total = 0
        while total < buffer.count {
            let requested = buffer.count - total
            let got = positioned ? pread(fd, base + total, requested, off_t(total)) : read(fd, base + total, requested)
            if got > 0 {
                total += got
                if got < requested && total == knownSize { break }
            } else if got == 0 {
                break
            } else if errno != EINTR {
                return (total, errno)
            }
        }
        return (total, 0)
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
            let parent = FileSystem.parentPath(of: path)
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
