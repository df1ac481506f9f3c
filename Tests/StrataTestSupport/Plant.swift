import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Plants hostile items with the system calls an attacker would use.
public enum Plant {
    /// Replaces whatever is at `path` with a symbolic link to `target`.
    ///
    /// - Throws: The file system's error.
    public static func link(at path: String, to target: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    /// Replaces whatever is at `path` with a FIFO (no writer ever opens it: a blocking open would hang).
    ///
    /// - Throws: `POSIXError` when mkfifo(3) fails.
    public static func fifo(at path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Replaces whatever is at `path` with a sparse file of `size` bytes (no blocks on disk), starting
    /// with `prefix`.
    ///
    /// - Throws: The file system's error, or `POSIXError` when truncate(2) fails.
    public static func sparse(at path: String, size: Int64, prefix: Data = Data()) throws {
        try? FileManager.default.removeItem(atPath: path)
        try prefix.write(to: URL(fileURLWithPath: path))
        guard truncate(path, off_t(size)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
