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

/// Gives a store's folders and a key file their Data Protection class (iOS, tvOS, watchOS, visionOS).
///
/// A file created in a folder takes the folder's class, so setting it on the store's folders covers every
/// entry written afterwards; entries written before a change keep the class they had. macOS protects whole
/// volumes (FileVault) instead, and Linux has no such classes: there this does nothing.
///
/// The class is set on an open descriptor (`fcntl(F_SETPROTECTIONCLASS)`), never by path: the folders were
/// opened and checked without following links (DiskStore+Folders.swift), and a name swapped for a link after
/// that check must not carry the class onto something outside the store (Docs/Security.md).
///
/// Thread safety: stateless.
enum DataProtection {
    /// Whether this platform has per-file protection classes.
    static var isAvailable: Bool {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return true
        #else
        return false
        #endif
    }

    /// The kernel's number for `protection`, as `F_SETPROTECTIONCLASS` takes it.
    ///
    /// Classes A to D of Apple Platform Security ("Data Protection classes",
    /// https://support.apple.com/guide/security/data-protection-classes-secb010e978a/web): A is
    /// `NSFileProtectionComplete`, B `…CompleteUnlessOpen`, C `…CompleteUntilFirstUserAuthentication`, D
    /// `…None`. The numbers are xnu's `PROTECTION_CLASS_A` (1) to `PROTECTION_CLASS_D` (4) in
    /// bsd/sys/content_protection.h, a header the SDK does not ship, so they are spelled here.
    static func classNumber(_ protection: DiskCacheConfiguration.FileProtection) -> Int32 {
        switch protection {
        case .complete: return 1
        case .completeUnlessOpen: return 2
        case .completeUntilFirstUserAuthentication: return 3
        case .none: return 4
        }
    }

    /// Sets `protection` on each of `folders`, through their held descriptors; does nothing where
    /// ``isAvailable`` is false.
    ///
    /// - Throws: `CacheError` from the file system when a class cannot be set.
    static func apply(_ protection: DiskCacheConfiguration.FileProtection, to folders: [Directory]) throws {
        for folder in folders {
            try apply(protection, descriptor: folder.descriptor, path: folder.path)
        }
    }

    /// Sets `protection` on the open file or folder `descriptor`; does nothing where ``isAvailable`` is false.
    ///
    /// - Parameters:
    ///   - descriptor: An open descriptor of the item (the class goes to what it refers to, whatever its name
    ///     now points at).
    ///   - path: The item's path, for the error message only.
    /// - Throws: `CacheError` from the file system when the class cannot be set.
    static func apply(_ protection: DiskCacheConfiguration.FileProtection, descriptor: Int32, path: String) throws {
        // Before the platform check: Linux has no classes, and its tests still need to see what a store asks for.
        recorder?.record(path, protection)
        guard isAvailable else { return }
        #if canImport(Darwin)
        if fcntl(descriptor, F_SETPROTECTIONCLASS, classNumber(protection)) != 0 {
            throw CacheError.posix(
                errno, "cannot give '\(path)' the Data Protection class \(protection)", path: path)
        }
        #endif
    }

    // MARK: - Test seam

    /// Where ``apply(_:descriptor:path:)`` notes each item it is asked to protect, while a test has bound one
    /// (`DataProtection.$recorder.withValue(Recorder()) { … }`); `nil`, and a task-local read per call, otherwise.
    ///
    /// Linux has no protection classes, so this is how its tests check that every folder and file of a store
    /// asks for its class, and that a read-only store asks for none. A task-local, not a global: tests that
    /// open stores in parallel each see only their own calls.
    @TaskLocal static var recorder: Recorder?

    /// The items ``apply(_:descriptor:path:)`` was asked to protect, in order.
    ///
    /// Thread safety: `Sendable`; calls are noted under a lock.
    final class Recorder: Sendable {
        private let calls = Locked<[(path: String, protection: DiskCacheConfiguration.FileProtection)]>([])

        /// The paths given, with their classes, in the order asked.
        var applied: [(path: String, protection: DiskCacheConfiguration.FileProtection)] {
            calls.withLock { $0 }
        }

        func record(_ path: String, _ protection: DiskCacheConfiguration.FileProtection) {
            calls.withLock { $0.append((path, protection)) }
        }
    }
}
