import Foundation
import StrataTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Scenario 8: a hostile store folder (Docs/Security.md, "A hostile store folder"). Each round builds a
/// store with the `strata` binary, plants one random item where one of the store's folders or files
/// belongs (a link to a canary folder outside the store, a FIFO, a 200 GB sparse file, a stray file or
/// folder), runs one random command with a deadline, and checks: the command ended on its own (no hang),
/// was not killed by a signal (no crash), exited 0, 1 or 3, left the canary unchanged, and — unless the
/// item sits on the key-check record or replaced the entries folder — left the other entry readable.
enum Hostile {
    static let places = [
        "tmp", "entries", "locks", "quarantine", "FANOUT", "store.check", "store.lock", "store.stats", "ENTRY",
        "KEYLOCK",
    ]
    static let kinds = ["link", "fifo", "sparse", "file", "folder"]
    static let commands: [[String]] = [
        ["get", "victim"], ["get", "keep"], ["set", "victim", "new"], ["set", "other", "x"], ["rm", "victim"],
        ["ls"], ["stats"], ["trim"], ["verify"], ["clear"], ["exec", "--ttl", "1h", "--", "/bin/echo", "hi"],
    ]

    static func run(_ options: Options) throws -> Int32 {
        let report = Report(scenario: "hostile")
        let rounds = try options.int("rounds", default: 60)
        let strata = try options.url("strata")
        var generator = SplitMix64(seed: UInt64(try options.int("seed", default: 1)))
        let work = try TemporaryFolder.make(label: "reliability-hostile")
        defer { try? FileManager.default.removeItem(at: work) }
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_MASTER_KEY"] = Store.masterKeyBase64
        var hangs = 0
        var crashes = 0
        var canaryChanges = 0
        var lostEntries = 0
        for round in 0..<rounds {
            let folder = work.appendingPathComponent("round-\(round)")
            let store = folder.appendingPathComponent("store")
            // A file store: the places planted are the file engine's (entries/, fan-out folders, entry files).
            _ = try Store.open(store)
            let canary = try Canary(in: folder)
            let before = canary.snapshot()
            func strataRun(_ arguments: [String]) throws -> (status: Int32, signaled: Bool, stdout: Data, stderr: Data)
            {
                try runProcess(strata, ["--store", store.path] + arguments, environment: environment, timeout: 30)
            }
            for setup in [
                ["set", "victim", "v"], ["exec", "--ttl", "1h", "--", "/bin/true"], ["set", "keep", "kept"],
            ] {
                _ = try strataRun(setup)
            }
            let entries = entryFileNames(inStore: store)
            let victim = try entryName(of: "victim", in: store, strata: strata, environment: environment) ?? ""
            let place = places.randomElement(using: &generator) ?? "tmp"
            let kind = kinds.randomElement(using: &generator) ?? "link"
            let command = commands.randomElement(using: &generator) ?? ["ls"]
            let path = resolve(place, store: store, victim: victim)
            try plant(kind, at: path, canary: canary)
            let keepSurvives =
                place != "store.check" && place != "entries" && !(place == "FANOUT" && sharesFanOut(entries))
            let result = try strataRun(command)
            let label = "round \(round): \(kind) at \(place), \(command.joined(separator: " "))"
            if result.signaled && result.status == SIGKILL {
                hangs += 1
                report.fail("\(label): still running after 30 s")
            } else if result.signaled {
                crashes += 1
                report.fail("\(label): killed by signal \(result.status)")
            } else if ![0, 1, 3].contains(result.status) {
                report.fail("\(label): exit status \(result.status): \(String(decoding: result.stderr, as: UTF8.self))")
            }
            if canary.snapshot() != before {
                canaryChanges += 1
                report.fail("\(label): the canary outside the store changed")
            }
            if keepSurvives && command != ["clear"] {
                let keep = try strataRun(["get", "keep"])
                if keep.status != 0 || keep.stdout != Data("kept".utf8) {
                    lostEntries += 1
                    report.fail("\(label): the other entry is no longer readable (status \(keep.status))")
                }
            }
            try? FileManager.default.removeItem(at: folder)
        }
        report.record("rounds", rounds)
        report.record("hangs", hangs)
        report.record("crashes", crashes)
        report.record("canary_changes", canaryChanges)
        report.record("other_entries_lost", lostEntries)
        return report.finish()
    }

    /// The entry file name of `key`: the one entry file that `rm` makes disappear (then written back).
    static func entryName(of key: String, in store: URL, strata: URL, environment: [String: String]) throws -> String? {
        let before = entryFileNames(inStore: store)
        _ = try runProcess(strata, ["--store", store.path, "rm", key], environment: environment, timeout: 30)
        let after = entryFileNames(inStore: store)
        _ = try runProcess(strata, ["--store", store.path, "set", key, "v"], environment: environment, timeout: 30)
        return before.subtracting(after).first
    }

    static func sharesFanOut(_ names: Set<String>) -> Bool {
        Set(names.map { $0.prefix(2) }).count < names.count
    }

    static func resolve(_ place: String, store: URL, victim: String) -> String {
        switch place {
        case "FANOUT": return store.path + "/entries/" + victim.prefix(2)
        case "ENTRY": return store.path + "/entries/" + victim.prefix(2) + "/" + victim
        case "KEYLOCK":
            let locks = store.appendingPathComponent("locks").path
            let name = ((try? FileManager.default.contentsOfDirectory(atPath: locks)) ?? []).sorted().first
            return locks + "/" + (name ?? "none.lock")
        default: return store.path + "/" + place
        }
    }

    static func plant(_ kind: String, at path: String, canary: Canary) throws {
        switch kind {
        case "link": try Plant.link(at: path, to: canary.url.path)
        case "fifo": try Plant.fifo(at: path)
        case "sparse": try Plant.sparse(at: path, size: 200 << 30, prefix: Data("STRE".utf8))
        case "file":
            try? FileManager.default.removeItem(atPath: path)
            try Data("stray".utf8).write(to: URL(fileURLWithPath: path))
        default:
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path + "/inner", withIntermediateDirectories: true)
        }
    }
}
