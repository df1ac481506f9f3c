#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the tool's own file descriptors out of the commands it starts.
///
/// `exec` runs a command while holding the store's per-key `flock`. Should that lock's descriptor leak
/// into the command, and the command leave a daemon behind, the daemon would hold the lock and every
/// later `exec` of the key would wait for it. So before spawning, every descriptor that this process
/// opened itself is marked close-on-exec. Descriptors inherited from the caller (say `3<input` in the
/// shell) are left alone and reach the command as a shell would pass them.
enum DescriptorHygiene {
    /// The descriptors open when the process started, recorded by ``recordInherited()``.
    nonisolated(unsafe) private static var inherited: Set<Int32> = []

    /// Records the descriptors open now. Call once, before the tool opens any descriptor of its own and before
    /// any other thread exists (`Runner` calls it for `exec` only, before the store opens; hence
    /// `nonisolated(unsafe)`: the one write happens before any read, on the main thread).
    static func recordInherited() {
        inherited = openDescriptors()
    }

    /// Marks every descriptor opened since ``recordInherited()`` close-on-exec.
    static func protectOwnDescriptors() {
        for descriptor in openDescriptors() where descriptor > 2 && !inherited.contains(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    private static func openDescriptors() -> Set<Int32> {
        #if canImport(Darwin)
        let folder = "/dev/fd"
        #else
        let folder = "/proc/self/fd"
        #endif
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        // The listing's own descriptor shows up in it and is closed by now: keep only valid ones.
        return Set(names.compactMap { Int32($0) }.filter { fcntl($0, F_GETFD) >= 0 })
    }
}
