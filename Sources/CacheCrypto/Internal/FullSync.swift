#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Flushes an open file or folder to stable storage: master-key files here, and the disk tier's `.fsync`
/// durability (one copy, shared through `package` access).
///
/// On Darwin `fsync(2)` only hands the data to the drive, whose own cache may still lose it in a power cut;
/// `fcntl(F_FULLFSYNC)` also asks the drive to flush that cache (Apple's fsync(2) and fcntl(2) manual pages,
/// "Ensuring Data Is Written to Disk"). Some file systems (network and FAT volumes among them) refuse
/// `F_FULLFSYNC`; `fsync` is then the best that can be done. On Linux `fsync` already flushes the drive's
/// cache, so it is used directly.
///
/// - Parameter descriptor: An open file or folder.
/// - Returns: 0 on success, -1 with `errno` set otherwise (the convention of the calls it replaces).
/// - Complexity: One or two system calls; blocks until the drive reports the data written.
package func fullSync(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    while true {
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        if errno != EINTR { break }
    }
    #endif
    while true {
        let result = fsync(descriptor)
        if result == 0 || errno != EINTR { return result }
    }
}
