import Foundation

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
