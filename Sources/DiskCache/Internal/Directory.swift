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

// Every name below the store folder is resolved relative to an open folder descriptor, one component at a
// time, and never through a symbolic link: a folder is opened with `O_NOFOLLOW | O_DIRECTORY`, a file with
// `O_NOFOLLOW | O_NONBLOCK`, and removals, renames and status calls are the `*at` forms that do not follow a
// final link. A link, FIFO or other foreign item planted in the store therefore fails the call (`ELOOP`,
// `ENOTDIR`) or is acted on itself, never on what it points to, and no check-then-use window exists for an
// attacker to swap a folder between two calls (Docs/Security.md, "A hostile store folder").

/// An open folder; names given to its methods are single path components resolved relative to it.
///
/// The descriptor is closed when the last reference goes away, so a thread that holds a `Directory` can
/// never see its descriptor number reused by another open. `Sendable`: both stored properties are
/// immutable, and the system calls on one descriptor are safe from any number of threads.
final class Directory: Sendable {
    let descriptor: Int32
    /// The folder this one was opened in (kept open with it), `nil` for a folder opened by path.
    private let parent: Directory?
    /// The path for ``open(path:)``, else the name inside ``parent``.
    private let name: String

    private init(descriptor: Int32, parent: Directory?, name: String) {
        self.descriptor = descriptor
        self.parent = parent
        self.name = name
    }

    /// The folder's path, for messages only (never resolved again); built on demand, since most
    /// operations never need it.
    var path: String { parent.map { $0.path + "/" + name } ?? name }

    deinit { _ = close(descriptor) }

    /// Opens the folder at `path`, following symbolic links in it: the path is the caller's choice.
    static func open(path: String) throws(FileError) -> Directory {
        Directory(
            descriptor: try retrying("cannot open folder", path) {
                systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            },
            parent: nil, name: path)
    }

    /// Opens the folder `name` inside this one; a symbolic link or any non-folder there fails with
    /// `ELOOP` or `ENOTDIR` (see ``FileError/isForeignItem``).
    func directory(_ name: String) throws(FileError) -> Directory {
        let fd = try Self.retrying("cannot open folder", self.path + "/" + name) {
            openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        return Directory(descriptor: fd, parent: self, name: name)
    }

    /// Opens the file `name` without following a link and without blocking (a FIFO opens at once
    /// instead of waiting for a writer). The caller checks the kind with `fstat` before reading.
    func openFile(_ name: String, _ flags: Int32, mode: mode_t = 0o600) throws(FileError) -> Int32 {
        try Self.retrying("cannot open file", self.path + "/" + name) {
            openat(descriptor, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        }
    }

    /// The status of `name` itself (a link is described, not followed); `nil` when nothing is there.
    func status(_ name: String) throws(FileError) -> FileStatus? {
        var info = stat()
        if fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw FileError(errno: code, operation: "cannot stat file", path: path + "/" + name)
        }
        return FileStatus(info)
    }

    /// Removes the non-folder `name` (a link is removed itself); nothing there is not an error.
    func unlink(_ name: String) throws(FileError) {
        if unlinkat(descriptor, name, 0) != 0 && errno != ENOENT {
            throw FileError(errno: errno, operation: "cannot remove file", path: path + "/" + name)
        }
    }

    /// Creates the folder `name` with owner-only permissions; an existing item of any kind is not an
    /// error here (opening it with ``directory(_:)`` tells a folder from a foreign item).
    func makeDirectory(_ name: String) throws(FileError) {
        if mkdirat(descriptor, name, 0o700) != 0 && errno != EEXIST {
            throw FileError(errno: errno, operation: "cannot create folder", path: path + "/" + name)
        }
    }

    /// Renames `name` to `newName` in `destination` (atomically replacing a file there); a link is
    /// moved itself.
    func rename(_ name: String, to destination: Directory, as newName: String) throws(FileError) {
        if renameat(descriptor, name, destination.descriptor, newName) != 0 {
            throw FileError(
                errno: errno, operation: "cannot rename file into place", path: destination.path + "/" + newName)
        }
    }

    /// Gives the file `name` the second name `newName` in `destination`; fails with `EEXIST` rather than
    /// replace. A link is never followed (flag 0 of `linkat`).
    func link(_ name: String, to destination: Directory, as newName: String) throws(FileError) {
        if linkat(descriptor, name, destination.descriptor, newName, 0) != 0 {
            throw FileError(errno: errno, operation: "cannot link file", path: destination.path + "/" + newName)
        }
    }

    /// Flushes the folder's entries (a rename is durable only once its folder is synced).
    func sync() throws(FileError) {
        try FileSystem.syncFile(descriptor, path: path)
    }

    /// Calls `body` with the name and status (links not followed) of every item in the folder, skipping
    /// `.`, `..` and other names starting with a dot.
    ///
    /// - Complexity: One `getdents` per batch and one `fstatat` per item.
    func forEach(_ body: (String, FileStatus) throws -> Void) throws {
        // A descriptor of its own for the listing: `fdopendir` takes it over, and a duplicate made with
        // `dup` would share the read position with concurrent listings of this folder.
        let listing = try Self.retrying("cannot list folder", path) {
            openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard let stream = fdopendir(listing) else {
            let code = errno
            _ = close(listing)
            throw FileError(errno: code, operation: "cannot list folder", path: path)
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            var info = stat()
            let name: String? = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { name in
                    guard name.pointee != 0x2e,  // ".", "..", and hidden files are never the store's
                        fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0
                    else { return nil }
                    return String(cString: name)
                }
            }
            if let name { try body(name, FileStatus(info)) }
        }
    }

    /// Runs `call` until it returns a descriptor or fails with something other than `EINTR`.
    private static func retrying(
        _ operation: String, _ path: @autoclosure () -> String, _ call: () -> Int32
    ) throws(FileError) -> Int32 {
        while true {
            let fd = call()
            if fd >= 0 { return fd }
            if errno != EINTR { throw FileError(errno: errno, operation: operation, path: path()) }
        }
    }
}

extension FileError {
    /// Whether the failure means a foreign item sits at the name: a symbolic link (`ELOOP`; `EMLINK` on
    /// FreeBSD), a non-folder where a folder was asked for (`ENOTDIR`), or a folder where a file was
    /// opened for writing (`EISDIR`).
    var isForeignItem: Bool { errno == ELOOP || errno == ENOTDIR || errno == EMLINK || errno == EISDIR }
}

/// `open(2)` under a name that does not clash with ``Directory/open(path:)``.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
