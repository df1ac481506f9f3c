import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds what DiskCache's own scan passes over: something under an entry's name in the entries folder
/// (layout in Docs/DiskFormat.md, `entries/<xx>/<64 hex digits>`) that is not a regular file — a
/// directory left by a tool or a mistake, a device, a socket.
///
/// DiskCache lists regular files only, so such a thing is neither an entry nor reported; `verify`
/// uses this scan to count it as an entry file that cannot be read, so that it is not silently skipped.
enum EntryFolderScan {
    /// The paths under entry names that are not regular files (symbolic links are not followed).
    ///
    /// - Parameter store: The store's folder.
    /// - Returns: Absolute paths, sorted; empty when there are none or the folder cannot be listed.
    /// - Complexity: One `lstat` per item in the entries folder.
    static func nonFileEntries(in store: URL) -> [String] {
        let entries = store.appendingPathComponent("entries", isDirectory: true).path
        let fileManager = FileManager.default
        var found: [String] = []
        for folder in (try? fileManager.contentsOfDirectory(atPath: entries)) ?? [] where folder.utf8.count == 2 {
            let folderPath = entries + "/" + folder
            for name in (try? fileManager.contentsOfDirectory(atPath: folderPath)) ?? []
            where isEntryName(name) && name.hasPrefix(folder) {
                let path = folderPath + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                if (info.st_mode & S_IFMT) != S_IFREG { found.append(path) }
            }
        }
        return found.sorted()
    }

    private static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
