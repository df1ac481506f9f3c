import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk baseline: one unencrypted file per key, written to a temporary file and renamed into place,
/// read back whole, with plain POSIX calls (open, write, fsync, rename, fstat, read).
///
/// It does what DiskCache must do at least — an atomic replace of a whole file, optionally flushed — and
/// nothing else: no encryption, no header, no index, no keyed-hash file names (the key is the name). The
/// ratio against it is the price of everything DiskCache adds.
struct PlainFileStore: Sendable {
    struct IOError: Error, CustomStringConvertible {
        let description: String
    }

    let directory: String
    let fsync: Bool

    init(directory: URL, fsync: Bool) {
        self.directory = directory.path
        self.fsync = fsync
    }

    /// Writes `bytes` as the file `name`, atomically.
    func write(_ bytes: Data, name: String) throws {
        let path = directory + "/" + name
        let temporaryPath = path + ".tmp"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw IOError(description: "open \(temporaryPath): errno \(errno)") }
        let written = bytes.withUnsafeBytes { buffer in
            systemWrite(descriptor, buffer.baseAddress, buffer.count)
        }
        if self.fsync { _ = systemFsync(descriptor) }
        close(descriptor)
        guard written == bytes.count else { throw IOError(description: "short write to \(temporaryPath)") }
        guard rename(temporaryPath, path) == 0 else { throw IOError(description: "rename \(path): errno \(errno)") }
        if self.fsync { syncDirectory() }
    }

    /// Reads the whole file `name`, or `nil` when there is none.
    func read(name: String) throws -> Data? {
        let path = directory + "/" + name
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw IOError(description: "open \(path): errno \(errno)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw IOError(description: "fstat \(path): errno \(errno)") }
        let size = Int(status.st_size)
        var data = Data(count: size)
        let readCount = data.withUnsafeMutableBytes { buffer in
            var total = 0
            while total < size {
                let count = systemRead(descriptor, buffer.baseAddress! + total, size - total)
                if count <= 0 { break }
                total += count
            }
            return total
        }
        guard readCount == size else { throw IOError(description: "short read from \(path)") }
        return data
    }

    private func syncDirectory() {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        _ = systemFsync(descriptor)
        close(descriptor)
    }
}

// The store's own `write`/`read` methods and `fsync` property shadow the C functions inside the type.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemFsync(_ descriptor: Int32) -> Int32 {
    fsync(descriptor)
}
