#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache {
    /// The file store under this cache, for tests that look at its files (epochs, paths, the hooks that
    /// simulate an interrupted wipe). The cache itself never uses it: it talks to ``engine`` only.
    ///
    /// A cache on another engine has no file store: asking for it is a test's bug, and stops the process.
    var store: DiskStore {
        guard let files = engine as? FileEngine else {
            preconditionFailure("this DiskCache runs on \(type(of: engine)), not on the file engine")
        }
        return files.store
    }
}
