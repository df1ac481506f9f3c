import DiskCache
import Foundation
import StrataTestSupport
import Testing

/// What one run of the built `strata` binary produced.
struct StrataResult: Sendable {
    var status: Int32
    var standardOutput: Data
    var standardError: Data

    var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
    var errorText: String { String(decoding: standardError, as: UTF8.self) }
    var errorLines: [String] { errorText.split(separator: "\n").map(String.init) }
}

/// A temporary store with its own master key, driven through the built binary.
///
/// Every harness has its own folder (store, key-file home, scratch files) and deletes it on `deinit`.
/// Output goes to files rather than pipes, so the harness never deadlocks on large outputs.
final class StrataHarness: Sendable {
    /// The scratch folder: `store/`, `data/` (key files) and any file a test creates.
    var root: URL { folder.url }
    private let folder = TemporaryFolder(label: "cli-tests")
    /// The store folder given with `--store`.
    let store: URL
    /// The base64 master key passed as `STRATA_MASTER_KEY`.
    let key: String

    init() throws {
        store = folder.url.appendingPathComponent("store", isDirectory: true)
        key = Self.randomKey()
    }

    /// Creates the store folder as a store of the file engine, under this harness's key, empty.
    ///
    /// The tool creates SQLite stores; it opens an existing store with the engine the store records. Tests of
    /// what the commands do about the file engine's own items (entry files, fan-out folders) start here.
    func makeFileStore() throws {
        let key = try #require(Data(base64Encoded: key))
        _ = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "strata", directory: store, masterKeySource: .masterKey(key), engine: .files),
            codec: .data)
    }

    /// A fresh base64 master key of 32 random bytes.
    static func randomKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// A path inside the scratch folder.
    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    /// Environment for the binary: the caller's, without any STRATA_ variable, with HOME and
    /// XDG_DATA_HOME/XDG_CACHE_HOME inside the scratch folder, (unless `key` is nil) `STRATA_MASTER_KEY`, a
    /// Redis reply deadline of 30 s (`STRATA_REDIS_TIMEOUT`), and `extra`, which wins.
    func environment(key: String?, extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_") }
        environment["HOME"] = path("home")
        environment["XDG_DATA_HOME"] = path("data")
        environment["XDG_CACHE_HOME"] = path("cache")
        // A hang guard, not a measure: these tests assert what the tool does while Redis answers, and the
        // library's 50 ms reply deadline (a cache's) is missed on CI's 2 loaded cores, where the tool fails open
        // as designed (a warning; a command of a fleet run once more). A test of a server that does not answer
        // sets its own.
        environment["STRATA_REDIS_TIMEOUT"] = "30s"
        if let key { environment["STRATA_MASTER_KEY"] = key }
        for (name, value) in extra { environment[name] = value }
        return environment
    }

    /// Starts `strata --store STORE ARGUMENTS` without waiting, in `directory` (default: the scratch folder).
    func start(
        _ arguments: [String], stdin: Data? = nil, key: String?? = .none, clockOffset: Double? = nil,
        extraEnvironment: [String: String] = [:], usesStore: Bool = true, directory: URL? = nil
    ) throws -> RunningStrata {
        var extra = extraEnvironment
        if let clockOffset { extra["STRATA_CLOCK_OFFSET"] = String(clockOffset) }
        let storeArguments = usesStore ? ["--store", store.path] : []
        return try RunningStrata(
            arguments: storeArguments + arguments, stdin: stdin,
            environment: environment(key: key ?? self.key, extra: extra), directory: directory ?? root)
    }

    /// Runs `arguments` (a command pointed at a listener inside this test process) again while its output
    /// says a Redis deadline passed, at most `attempts` times: the tool's deadlines are tens of
    /// milliseconds, and on a loaded machine the listener's thread may not run in time although it answers
    /// at once. A test that wants the deadline itself does not use this.
    func runAnswered(_ arguments: [String], attempts: Int = 20) throws -> StrataResult {
        var result = try run(arguments)
        for _ in 1..<attempts where (result.errorText + result.outputText).contains("deadline") {
            result = try run(arguments)
        }
        return result
    }

    /// Runs `strata --store STORE ARGUMENTS` to completion, in `directory` (default: the scratch folder).
    func run(
        _ arguments: [String], stdin: Data? = nil, key: String?? = .none, clockOffset: Double? = nil,
        extraEnvironment: [String: String] = [:], usesStore: Bool = true, directory: URL? = nil
    ) throws -> StrataResult {
        try start(
            arguments, stdin: stdin, key: key, clockOffset: clockOffset, extraEnvironment: extraEnvironment,
            usesStore: usesStore, directory: directory
        ).wait()
    }

    /// Makes the folder `relativePath` (and its parents) inside the scratch folder, resolved as `getcwd`
    /// would report it (the temporary directory may sit behind a symbolic link).
    func makeFolder(_ relativePath: String) throws -> URL {
        let url = root.appendingPathComponent(relativePath, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.resolvingSymlinksInPath()
    }

    /// Runs `/bin/sh -c SCRIPT` in the scratch folder, for what `Process` cannot express: arguments,
    /// variables and folders that are not UTF-8 (made with `printf '\377'`), pipelines, redirections.
    /// The script sees `$STRATA` (the binary), `$STORE` (the store folder) and `$ROOT` (the scratch
    /// folder), and the harness environment (with `STRATA_MASTER_KEY` unless `key` is `.some(nil)`).
    func runShell(_ script: String, key: String?? = .none) throws -> StrataResult {
        let extra = ["STRATA": try StrataBinary.url().path, "STORE": store.path, "ROOT": root.path]
        return try RunningStrata(
            executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script], stdin: nil,
            environment: environment(key: key ?? self.key, extra: extra), directory: root
        ).wait()
    }

    /// The bytes of a scratch file, or empty when it does not exist.
    func contents(_ name: String) -> Data {
        (try? Data(contentsOf: URL(fileURLWithPath: path(name)))) ?? Data()
    }

    /// How many lines a marker file has: the number of times a command appended to it.
    func lineCount(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: path(name), encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").count
    }
}

/// A started `strata` process whose output goes to files.
final class RunningStrata {
    private let process: ChildProcess
    private let outputURL: URL
    private let errorURL: URL
    private let ended = DispatchSemaphore(value: 0)

    init(
        executable: URL? = nil, arguments: [String], stdin: Data?, environment: [String: String], directory: URL
    ) throws {
        let id = UUID().uuidString
        outputURL = directory.appendingPathComponent("run-\(id).out")
        errorURL = directory.appendingPathComponent("run-\(id).err")
        try Data().write(to: outputURL)
        try Data().write(to: errorURL)
        let output = try FileHandle(forWritingTo: outputURL)
        let error = try FileHandle(forWritingTo: errorURL)
        var input: FileHandle?
        if let stdin {
            let inputURL = directory.appendingPathComponent("run-\(id).in")
            try stdin.write(to: inputURL)
            input = try FileHandle(forReadingFrom: inputURL)
        }
        // The child has its own copies once started; ours close here.
        defer { for handle in [output, error, input] { try? handle?.close() } }
        process = try ChildProcess(
            try (executable ?? StrataBinary.url()).path, arguments, environment: environment, directory: directory.path,
            standardInput: input.map { .inherit($0.fileDescriptor) } ?? .null,
            standardOutput: .inherit(output.fileDescriptor), standardError: .inherit(error.fileDescriptor))
        // A thread of its own waits for the end, as Foundation's termination handler did.
        let (process, ended) = (self.process, self.ended)
        Thread {
            process.waitUntilExit()
            ended.signal()
        }.start()
    }

    /// Waits at most `seconds` for the process to end; a process still running then is killed and the
    /// result is `nil` (a hang).
    func wait(timeout seconds: Double) throws -> StrataResult? {
        guard ended.wait(timeout: .now() + seconds) == .success else {
            process.kill(SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return try wait()
    }

    /// What the process has written to its standard error so far.
    var errorSoFar: String {
        String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
    }

    /// Sends `signal` to the process (not to the commands it started).
    func kill(_ signal: Int32 = SIGKILL) {
        process.kill(signal)
    }

    /// Waits for the process to end and collects its outputs.
    func wait() throws -> StrataResult {
        return StrataResult(
            status: process.waitUntilExit().shellStatus,
            standardOutput: try Data(contentsOf: outputURL), standardError: try Data(contentsOf: errorURL))
    }
}

/// Finds the `strata` executable that SwiftPM built next to the test bundle.
enum StrataBinary {
    /// The executable's URL.
    ///
    /// Looks, in order, at `STRATA_BINARY`, the folder holding the test runner (`swift test` and
    /// `swift test --sanitize=thread` put the tool in the same products folder), and `.build/debug`
    /// relative to this source file.
    static func url() throws -> URL {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["STRATA_BINARY"] {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("strata"))
        }
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("strata"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("strata"))
        // Fallback for unusual runners: <package>/.build/debug/strata.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/strata"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        throw BinaryNotFound(searched: candidates.map(\.path))
    }

    struct BinaryNotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "strata executable not found; searched \(searched.joined(separator: ", "))" }
    }
}

/// Binary test data taken from the system.
enum SystemSample {
    /// The first `count` bytes of a large system binary (swift-frontend, else the largest file in
    /// /usr/bin). Contains NUL bytes and every byte value, as an executable does.
    static func bytes(count: Int) throws -> Data {
        let preferred = "/opt/swift/usr/bin/swift-frontend"
        var path = preferred
        if ((try? FileManager.default.attributesOfItem(atPath: preferred)[.size] as? Int) ?? 0) < count {
            let directory = "/usr/bin"
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            let sized = names.compactMap { name -> (String, Int)? in
                let full = "\(directory)/\(name)"
                guard let size = try? FileManager.default.attributesOfItem(atPath: full)[.size] as? Int else {
                    return nil
                }
                return (full, size)
            }
            path = sized.max { $0.1 < $1.1 }?.0 ?? preferred
        }
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        return try handle.read(upToCount: count) ?? Data()
    }

    /// The path of a system file with at least `count` bytes, for commands to read.
    static func filePath(atLeast count: Int) throws -> String {
        let preferred = "/opt/swift/usr/bin/swift-frontend"
        if ((try? FileManager.default.attributesOfItem(atPath: preferred)[.size] as? Int) ?? 0) >= count {
            return preferred
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: "/usr/bin")
        for name in names {
            let full = "/usr/bin/\(name)"
            if ((try? FileManager.default.attributesOfItem(atPath: full)[.size] as? Int) ?? 0) >= count { return full }
        }
        throw StrataBinary.BinaryNotFound(searched: ["a system file of \(count) bytes"])
    }
}
