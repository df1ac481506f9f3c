import Foundation

extension SeedCorpus {
    /// Valid replies of every RESP3 type, and a pipelined stream of them, for the RESP target
    /// (`STRATA_FUZZ_TARGET=resp StrataFuzz --make-corpus Tests/Reliability/Corpus-RESP`).
    static let respFrames: [String: String] = [
        "simple": "+OK\r\n", "error": "-ERR unknown command 'FOO'\r\n", "integer": ":-42\r\n",
        "bulk": "$5\r\nhello\r\n", "null-bulk": "$-1\r\n", "null": "_\r\n", "boolean": "#t\r\n",
        "double": ",-1.5e3\r\n", "big-number": "(3492890328409238509324850943850943825024385\r\n",
        "blob-error": "!21\r\nSYNTAX invalid syntax\r\n", "verbatim": "=15\r\ntxt:Some string\r\n",
        "array": "*3\r\n:1\r\n$1\r\nx\r\n*-1\r\n", "map": "%2\r\n+role\r\n+master\r\n+proto\r\n:3\r\n",
        "set": "~2\r\n+a\r\n#f\r\n", "attribute": "|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
        "push": ">2\r\n$10\r\ninvalidate\r\n*1\r\n$12\r\nstrata:v2:ns\r\n",
        "nested": "*2\r\n%1\r\n+k\r\n~1\r\n,inf\r\n>1\r\n_\r\n",
    ]

    static func writeRESP(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var seeds = respFrames
        seeds["pipelined"] = respFrames.keys.sorted().compactMap { respFrames[$0] }.joined()
        for (name, text) in seeds {
            try Data(text.utf8).write(to: directory.appendingPathComponent("resp-\(name)"))
        }
        print("wrote \(seeds.count) RESP seeds to \(directory.path)")
    }
}
