import Foundation

/// Finds an executable of this package that SwiftPM built beside the test runner (a test target that
/// depends on it makes `swift build --build-tests` and `swift test` build it, in whatever scratch path).
public enum BuiltProduct {
    /// The executable named `name`.
    ///
    /// Looks, in order, next to the test runner (`Bundle.main.executableURL`), next to the test bundle,
    /// and in `.build/debug` of the package this file belongs to.
    ///
    /// - Throws: `CocoaError(.fileNoSuchFile)` when none of those holds an executable file by that name.
    public static func url(named name: String) throws -> URL {
        var candidates: [URL] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        // Tests/StrataTestSupport/BuiltProduct.swift -> the package folder.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/\(name)"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return found
    }
}
