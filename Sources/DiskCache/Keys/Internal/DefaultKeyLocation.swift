import CacheCore
import Foundation

/// The default key file's name; its folder comes from ``DiskCacheLocation/keysFolder(environment:)``.
enum DefaultKeyLocation {
    /// `<storeName>.key`, after checking that the name is a single, valid file-name component.
    ///
    /// - Throws: `CacheError` `.invalidArgument` for an empty name, `.`, `..`, a name with `/` or NUL, or
    ///   one too long for a file name once `.key` is added (255 bytes in all).
    static func fileName(forStoreName storeName: String) throws -> String {
        let fileName = storeName + ".key"
        guard !storeName.isEmpty, storeName != ".", storeName != "..", !storeName.contains("/"),
            !storeName.unicodeScalars.contains("\0"), fileName.utf8.count <= 255
        else {
            throw CacheError(
                .invalidArgument,
                "store name \"\(storeName)\" cannot name a key file: use 1 to 251 bytes without '/' or NUL, "
                    + "other than '.' and '..'")
        }
        return fileName
    }
}
