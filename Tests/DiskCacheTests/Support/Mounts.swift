import Foundation
import Testing

/// Bind and tmpfs mounts for tests that need a file system that refuses writes or runs out of space.
///
/// Only root on Linux may mount; elsewhere ``available`` is `false` and those tests are skipped.
enum Mounts {
    /// Why mount-based tests are skipped where they are.
    static let requirement: Comment = "needs root on Linux with mount(8) allowed (read-only bind and tmpfs mounts)"

    /// Whether this process can make a read-only bind mount (probed once, by making one).
    static let available: Bool = {
        #if os(Linux)
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: mountTool) else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("strata-mount-probe-\(UUID())")
        let source = probe.appendingPathComponent("source")
        let target = probe.appendingPathComponent("target")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)) != nil,
            (try? FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)) != nil,
            let mount = try? bindReadOnly(source, at: target)
        else { return false }
        mount.unmount()
        return true
        #else
        return false
        #endif
    }()

    static let mountTool = "/bin/mount"
    static let unmountTool = "/bin/umount"

    /// Shows `source` at `target` (an existing folder) through a read-only bind mount.
    static func bindReadOnly(_ source: URL, at target: URL) throws -> MountPoint {
        try run(mountTool, ["--bind", source.path, target.path])
        let mount = MountPoint(path: target.path)
        try run(mountTool, ["-o", "remount,bind,ro", target.path])
        return mount
    }

    /// Mounts an empty tmpfs of `bytes` bytes at `target` (created if needed).
    static func tmpfs(at target: URL, bytes: Int) throws -> MountPoint {
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try run(mountTool, ["-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", target.path])
        return MountPoint(path: target.path)
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: arguments.joined(separator: " ")])
        }
    }
}

/// A mount made by a test; unmounted (lazily, so an open file cannot block it) by ``unmount()``.
struct MountPoint {
    let path: String

    func unmount() {
        try? Mounts.run(Mounts.unmountTool, ["-l", path])
    }
}
