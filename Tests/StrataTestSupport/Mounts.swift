import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Bind and tmpfs mounts for tests that need a file system that refuses writes (EROFS, which even root
/// cannot get around, unlike permission bits) or runs out of space (ENOSPC).
///
/// Only root on Linux may mount; elsewhere ``available`` is `false` and those tests are skipped with
/// ``requirement`` as the reason (`.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement))`).
public enum Mounts {
    /// Why mount-based tests are skipped where they are.
    public static let requirement = "needs root on Linux with mount(8) allowed (read-only bind and tmpfs mounts)"

    /// Whether this process can make a read-only bind mount (probed once, by making one).
    public static let available: Bool = {
        #if os(Linux)
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: mountTool) else { return false }
        guard let probe = try? TemporaryFolder.make(label: "mount-probe") else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard let mount = try? bindReadOnly(probe, at: probe) else { return false }
        mount.unmount()
        return true
        #else
        return false
        #endif
    }()

    static let mountTool = "/bin/mount"
    static let unmountTool = "/bin/umount"

    /// Shows `source` at `target` (an existing folder; the same as `source` to make a folder read-only in
    /// place) through a read-only bind mount.
    ///
    /// - Throws: `CocoaError(.fileWriteUnknown)` naming the command when mount(8) fails; nothing is left
    ///   mounted then.
    public static func bindReadOnly(_ source: URL, at target: URL) throws -> MountPoint {
        try run(mountTool, ["--bind", source.path, target.path])
        let mount = MountPoint(path: target.path)
        do {
            try run(mountTool, ["-o", "remount,bind,ro", target.path])
        } catch {
            mount.unmount()
            throw error
        }
        return mount
    }

    /// Mounts an empty tmpfs of `bytes` bytes at `target` (created if needed).
    ///
    /// - Throws: The file system's error, or `CocoaError(.fileWriteUnknown)` when mount(8) fails.
    public static func tmpfs(at target: URL, bytes: Int) throws -> MountPoint {
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try run(mountTool, ["-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", target.path])
        return MountPoint(path: target.path)
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = try ChildProcess(tool, arguments, standardInput: .inherit(STDIN_FILENO))
        guard process.waitUntilExit() == .exited(0) else {
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(tool) \(arguments.joined(separator: " "))"])
        }
    }
}

/// A mount made by a test; unmounted (lazily, so an open file cannot block it) by ``unmount()``.
public struct MountPoint: Sendable {
    /// Where it is mounted.
    public let path: String

    /// Unmounts it; a failure is ignored (the mount goes away with the test machine).
    public func unmount() {
        try? Mounts.run(Mounts.unmountTool, ["-l", path])
    }
}
