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

/// What `stat(2)` says about a file, reduced to what the store needs.
struct FileStatus: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modified: timespec
    /// The inode's last status change (`st_ctime`): set by the kernel on every write, rename or time change,
    /// and never settable, so a file that took over a freed inode number still differs here.
    var changed: timespec
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

    /// Whether both describe the same file, unchanged in between: the same device, inode, size, modification
    /// time and status-change time. The inode alone is not enough: once a file is replaced and freed, a
    /// newer file (another writer's entry written just after) may get its inode number. This narrows that
    /// case to a file of the same size stamped with the same modification time within one tick of the
    /// kernel's coarse clock (which sets the status-change time); it cannot rule it out.
    func isUnchangedFile(since other: FileStatus) -> Bool {
        self == other && changed.tv_sec == other.changed.tv_sec && changed.tv_nsec == other.changed.tv_nsec
    }

    init(_ info: stat) {
        // `dev_t` is signed on Darwin; keep the bits rather than trap on a negative value.
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int(info.st_size)
        #if canImport(Darwin)
        modified = info.st_mtimespec
        changed = info.st_ctimespec
        #else
        modified = info.st_mtim
        changed = info.st_ctim
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
