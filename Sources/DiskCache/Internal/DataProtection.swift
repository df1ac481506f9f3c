import CacheCore
import Foundation

/// Gives a store's folders and a key file their Data Protection class (iOS, tvOS, watchOS, visionOS).
///
/// A file created in a folder takes the folder's class, so setting it on the store's folders covers every
/// entry written afterwards; entries written before a change keep the class they had. macOS protects whole
/// volumes (FileVault) instead, and Linux has no such classes: there this does nothing.
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

    /// Sets `protection` on each of `paths` (folders or files); does nothing where ``isAvailable`` is false.
    ///
    /// - Throws: `CacheError` from the file system when a class cannot be set.
    static func apply(_ protection: DiskCacheConfiguration.FileProtection, to paths: [String]) throws {
        guard isAvailable else { return }
        #if canImport(Darwin)
        let type: FileProtectionType
        switch protection {
        case .complete: type = .complete
        case .completeUnlessOpen: type = .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: type = .completeUntilFirstUserAuthentication
        case .none: type = .none
        }
        for path in paths {
            do {
                try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: path)
            } catch {
                throw CacheError(
                    .io, "cannot give '\(path)' the Data Protection class \(protection)", path: path, cause: error)
            }
        }
        #endif
    }
}
