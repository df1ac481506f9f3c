// In a file of its own, with no imports, so that the SQLite layer's benchmark
// (Benchmarks/sqlite_layer_bench.sh) can compile it without the rest of the file-system helpers.
extension FileSystem {
    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it ("/a/b/" → "/a",
    /// "/a" → "/", "a" → "", repeated slashes collapsed); written here because `NSString` is Foundation proper,
    /// not FoundationEssentials.
    static func parentPath(of path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        let joined = components.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : joined
    }
}
