import CacheCore
import Foundation
import StrataTestSupport

// File helpers of the master-key tests.

/// Runs `body` with a fresh, empty directory that is removed afterwards.
func withTemporaryDirectory(_ body: (URL) throws -> Void) throws {
    let folder = TemporaryFolder(label: "master-key-tests")
    try withExtendedLifetime(folder) { try body(folder.url) }
}

/// Writes `data` to `url` and sets its permission bits to exactly `mode`.
func writeFile(_ data: Data, to url: URL, mode: mode_t) throws {
    try data.write(to: url)
    guard chmod(url.path, mode) == 0 else { throw CacheError.posix(errno, "chmod", path: url.path) }
}

/// The permission bits of the file or folder at `url`.
func permissions(of url: URL) throws -> mode_t {
    var status = stat()
    guard stat(url.path, &status) == 0 else { throw CacheError.posix(errno, "stat", path: url.path) }
    return status.st_mode & 0o7777
}

func hexString(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}
