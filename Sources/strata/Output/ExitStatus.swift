/// The tool's exit statuses: the numbers are a documented contract that scripts rely on.
enum ExitStatus {
    /// The command did what was asked.
    static let success: Int32 = 0
    /// `get` found no live entry, or `verify` found and removed bad entries.
    static let miss: Int32 = 1
    /// The command line (or a test-only environment variable) was malformed; nothing was changed.
    static let usage: Int32 = 2
    /// The store or its key could not be used, or an output stream failed.
    static let storeFailure: Int32 = 3
    /// `exec` found the command but could not execute it (shell convention).
    static let notExecutable: Int32 = 126
    /// `exec` could not find the command (shell convention).
    static let notFound: Int32 = 127
    /// Standard output was closed by its reader: 128 + `SIGPIPE`, what a shell reports for `cat` there.
    static let outputClosed: Int32 = 141
}
