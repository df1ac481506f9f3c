import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--name value` options of one subcommand.
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), let value = rest.popFirst() else {
                throw HarnessError("expected --option value, got \(name)")
            }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String, default fallback: String? = nil) throws -> String {
        guard let value = values[name] ?? fallback else { throw HarnessError("missing --\(name)") }
        return value
    }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text) else { throw HarnessError("--\(name) wants an integer, got \(text)") }
        return value
    }

    func url(_ name: String) throws -> URL { URL(fileURLWithPath: try string(name)) }
}

/// A harness failure that is not a finding about Strata (bad arguments, a tool that would not start).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Figures of one scenario, printed as `figure <scenario>.<name> = <value>` lines, and its failures.
final class Report {
    let scenario: String
    private(set) var failures: [String] = []
    private var figures: [(String, String)] = []

    init(scenario: String) { self.scenario = scenario }

    func record(_ name: String, _ value: Any) {
        figures.append((name, "\(value)"))
        print("figure \(scenario).\(name) = \(value)")
    }

    /// Records a failed expectation; the scenario fails but keeps running so all figures get printed.
    func fail(_ message: String) {
        failures.append(message)
        print("FAILURE \(scenario): \(message)")
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    /// Prints the verdict line and returns the exit status.
    func finish() -> Int32 {
        if failures.isEmpty {
            print("PASS \(scenario)")
            return 0
        }
        print("FAIL \(scenario): \(failures.count) failure(s)")
        return 1
    }
}

/// Store access shared by the scenarios.
enum Store {
    /// The master key every scenario uses: 32 fixed bytes (the store's secrecy is not under test here).
    static let masterKey = Data((0..<32).map { UInt8(0xA0 ^ $0) })

    static var masterKeyBase64: String { masterKey.base64EncodedString() }

    /// Opens (creating if needed) the store in `directory` on `engine`.
    ///
    /// The file engine unless told: the scenarios edit, count, fill and graft its entry files, and were
    /// written for it. `.automatic` creates SQLite stores (issue 24), and so does the `strata` tool; a
    /// scenario that drives the tool on a file store creates the store here first, and the tool then opens it
    /// with the engine it records.
    static func open(
        _ directory: URL,
        byteLimit: Int? = nil,
        durability: DiskCacheConfiguration.Durability = .none,
        key: Data = masterKey,
        observer: CacheObserver? = nil,
        engine: DiskCacheConfiguration.Engine = .files
    ) throws -> DiskCache<String, Data> {
        let configuration = DiskCacheConfiguration(
            name: "reliability",
            directory: directory,
            byteLimit: byteLimit,
            durability: durability,
            masterKeySource: .masterKey(key),
            observer: observer,
            engine: engine
        )
        return try DiskCache<String, Data>(configuration: configuration, codec: .data)
    }

    static func key(_ index: Int) -> String { "key-\(index)" }

    /// Every regular file under `directory`, as paths relative to it, with sizes in bytes.
    static func files(under directory: URL) -> [String: Int] {
        var result: [String: Int] = [:]
        let root = directory.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
        while let relative = walker.nextObject() as? String {
            var info = stat()
            guard lstat(root + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            result[relative] = Int(info.st_size)
        }
        return result
    }

    /// Whether a file name is one of DiskCache's temporary files (an interrupted write's leftover).
    static func isTemporary(_ relativePath: String) -> Bool {
        let name = (relativePath as NSString).lastPathComponent.lowercased()
        return name.contains("tmp") || name.contains("temp") || name.hasPrefix(".#")
    }

    /// Whether a file is an entry file: its name is 64 lower-case hex digits (an HMAC-SHA-256 of the key,
    /// Docs/DiskFormat.md). Other files are store metadata, locks, temporary files or foreign.
    static func isEntry(_ relativePath: String) -> Bool {
        let name = (relativePath as NSString).lastPathComponent
        return name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

/// Counts observer events of each kind; safe to call from any thread.
final class EventCounter: Sendable {
    private let counts = Locked<[String: Int]>([:])
    private let paths = Locked<[String]>([])

    var observer: CacheObserver {
        { [counts, paths] event in
            counts.withLock { $0[event.kind.description, default: 0] += 1 }
            if event.kind == .corruptEntryRemoved, let path = event.path { paths.withLock { $0.append(path) } }
        }
    }

    func count(_ kind: CacheEvent.Kind) -> Int { counts.withLock { $0[kind.description] ?? 0 } }
    var removedPaths: [String] { paths.withLock { $0 } }
    var all: [String: Int] { counts.withLock { $0 } }
}

/// The path of this executable, to start copies of it as child processes.
var selfExecutable: URL {
    URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0])
}

/// Runs a child process to completion and returns its status, stdout and stderr. With `timeout` (seconds),
/// a child still running then is killed with `SIGKILL` (it then reads as signaled, status 9).
func runProcess(
    _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil,
    timeout: Double? = nil
) throws -> (status: Int32, signaled: Bool, stdout: Data, stderr: Data) {
    let process = try ChildProcess(
        executable.path, arguments, environment: environment, standardInput: .pipe, standardOutput: .pipe,
        standardError: .pipe)
    // All three are set for `.pipe`.
    let (input, output, errors) = (process.standardInput!, process.standardOutput!, process.standardError!)
    // Drain both pipes on other threads so a chatty child never blocks on a full pipe.
    let stdoutData = Locked<Data>(Data())
    let stderrData = Locked<Data>(Data())
    let group = DispatchGroup()
    for (pipe, sink) in [(output, stdoutData), (errors, stderrData)] {
        group.enter()
        DispatchQueue.global().async {
            let data = pipe.readDataToEndOfFile()
            sink.withLock { $0 = data }
            group.leave()
        }
    }
    if let stdin { try? input.write(contentsOf: stdin) }
    try? input.close()
    if let timeout {
        let watchdog = DispatchWorkItem { process.kill(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
    }
    let termination = process.waitUntilExit()
    group.wait()
    let (status, signaled): (Int32, Bool) =
        switch termination {
        case .exited(let code): (code, false)
        case .signalled(let signal): (signal, true)
        }
    return (status, signaled, stdoutData.withLock { $0 }, stderrData.withLock { $0 })
}
