import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

/// Scenario 7: after `removeAll()` and after `strata clear`, nothing under the store decrypts under any key
/// the process held, and no plaintext of the written values is on disk.
///
/// "Any key the process held" is the master key with the key material of the store before the wipe (old
/// epoch) and after it (new epoch). The harness does not reach into DiskCache's key derivation: it copies
/// the store before the wipe, then grafts the files left after the wipe into that copy, where the old
/// epoch's metadata still is, and asks a cache opened there with the master key for every key; it also asks
/// the wiped store itself (new epoch). A byte scan looks for a marker and for 24-byte windows of every value
/// in every file, before the wipe (a control: values must be encrypted anyway) and after it.
enum Privacy {
    static func run(_ options: Options) throws -> Int32 {
        let report = Report(scenario: "privacy")
        let keyCount = try options.int("keys", default: 32)
        let strata = try options.url("strata")
        let work = try TemporaryFolder.make(label: "reliability-privacy")
        defer { try? FileManager.default.removeItem(at: work) }
        let marker = "STRATA-PRIVACY-MARKER-\(UInt32.random(in: 0...UInt32.max))"
        let keys = (0..<keyCount).map { "secret-\($0)" }
        let values = Dictionary(
            uniqueKeysWithValues: keys.map { key in
                (key, Data((marker + "|" + key + "|").utf8) + Payload.make(key: key, version: 7, length: 600))
            })
        let needles = [Data(marker.utf8)] + values.values.map { Data($0.suffix(24)) }

        // API: removeAll() on an open cache.
        let apiStore = work.appendingPathComponent("api")
        let cache = try Store.open(apiStore)
        for key in keys { try cache.setValue(values[key] ?? Data(), forKey: key, expiry: .never) }
        let apiBefore = work.appendingPathComponent("api-before")
        try FileManager.default.copyItem(at: apiStore, to: apiBefore)
        try cache.removeAll()
        let apiHeld = keys.filter { (try? cache.value(forKey: $0)) != .some(nil) }
        report.record("api.values_readable_through_same_instance", apiHeld.count)
        report.expect(apiHeld.isEmpty, "the wiping instance still returns \(apiHeld.count) values")
        check(
            report, label: "api", before: apiBefore, after: apiStore, keys: keys, needles: needles, work: work)

        // CLI: `strata clear` from another process.
        let cliStore = work.appendingPathComponent("cli")
        // A file store: `check` grafts the files left after the wipe into the copy taken before it.
        _ = try Store.open(cliStore)
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_MASTER_KEY"] = Store.masterKeyBase64
        for key in keys {
            let set = try runProcess(
                strata, ["--store", cliStore.path, "set", key], stdin: values[key], environment: environment)
            guard set.status == 0 else {
                throw HarnessError("strata set failed: \(String(decoding: set.stderr, as: UTF8.self))")
            }
        }
        let cliBefore = work.appendingPathComponent("cli-before")
        try FileManager.default.copyItem(at: cliStore, to: cliBefore)
        let clear = try runProcess(strata, ["--store", cliStore.path, "clear"], environment: environment)
        report.record("cli.clear_status", clear.status)
        report.expect(clear.status == 0, "strata clear exited \(clear.status)")
        let cliHits = try keys.filter {
            try runProcess(strata, ["--store", cliStore.path, "get", $0], environment: environment).status != 1
        }
        report.record("cli.get_not_miss_after_clear", cliHits.count)
        report.expect(cliHits.isEmpty, "strata get found \(cliHits.count) keys after clear")
        check(report, label: "cli", before: cliBefore, after: cliStore, keys: keys, needles: needles, work: work)
        try interruptedWipes(report, trials: try options.int("wipe-trials", default: 10), work: work)
        return report.finish()
    }

    // MARK: - Interrupted wipes

    /// Kills a process in the middle of `removeAll()`: afterwards either every value is still there (the
    /// kill came before the new epoch was committed) or none is, never some.
    private static func interruptedWipes(_ report: Report, trials: Int, work: URL) throws {
        var outcomes: [String: Int] = [:]
        let keys = (0..<150).map { "wipe-\($0)" }
        for trial in 0..<trials {
            let store = work.appendingPathComponent("wipe-\(trial)")
            let cache = try Store.open(store)
            for key in keys {
                try cache.setValue(Payload.make(key: key, version: 1, length: 200), forKey: key, expiry: .never)
            }
            let child = try ChildProcess(
                selfExecutable.path, ["wipe-child", "--store", store.path], standardInput: .inherit(STDIN_FILENO),
                standardOutput: .pipe, standardError: .inherit(STDERR_FILENO))
            // The child says when its store is open; the kill then lands 0–5 ms into the wipe.
            _ = child.standardOutput?.availableData
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0..<5_000))) {
                child.kill(SIGKILL)
            }
            child.waitUntilExit()
            let readableCount = readable(keys, in: store)
            let outcome =
                readableCount == keys.count ? "all_readable" : readableCount == 0 ? "none_readable" : "partial"
            outcomes[outcome, default: 0] += 1
            if outcome == "partial" {
                report.fail("interrupted wipe \(trial) left \(readableCount) of \(keys.count) values")
            }
            let wrong = keys.filter { key in
                guard let value = (try? Store.open(store).value(forKey: key)) ?? nil else { return false }
                return Payload.verify(value, expectedKey: key) != .valid(version: 1)
            }
            report.expect(wrong.isEmpty, "interrupted wipe \(trial): wrong values for \(wrong.prefix(3))")
        }
        report.record("interrupted_wipe_trials", trials)
        for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
            report.record("interrupted_wipe.\(outcome)", count)
        }
    }

    /// The child role: opens the store, says so on stdout, and wipes it (until killed).
    static func wipeChild(_ options: Options) throws -> Int32 {
        let cache = try Store.open(try options.url("store"))
        FileHandle.standardOutput.write(Data("open\n".utf8))
        try cache.removeAll()
        return 0
    }

    private static func check(
        _ report: Report, label: String, before: URL, after: URL, keys: [String], needles: [Data], work: URL
    ) {
        let control = scan(before, for: needles)
        let leftover = scan(after, for: needles)
        let beforeFiles = Store.files(under: before)
        let afterFiles = Store.files(under: after)
        report.record("\(label).files_before_wipe", beforeFiles.count)
        report.record("\(label).files_after_wipe", afterFiles.count)
        report.record("\(label).plaintext_hits_before_wipe", control)
        report.record("\(label).plaintext_hits_after_wipe", leftover)
        report.expect(control == 0, "\(label): plaintext found in the store even before the wipe")
        report.expect(leftover == 0, "\(label): plaintext found after the wipe")

        // New epoch: the wiped store itself, opened afresh.
        let newEpochHits = readable(keys, in: after)
        report.record("\(label).decryptable_under_new_epoch", newEpochHits)
        report.expect(newEpochHits == 0, "\(label): \(newEpochHits) values readable after the wipe")

        // Old epoch: the pre-wipe copy, minus its entry files, plus every file the wipe left behind. Files
        // that existed before and after with the same bytes are metadata the wipe kept; they stay.
        let graft = work.appendingPathComponent("\(label)-graft")
        do {
            try FileManager.default.copyItem(at: before, to: graft)
            for (relative, _) in beforeFiles where afterFiles[relative] == nil {
                try FileManager.default.removeItem(at: graft.appendingPathComponent(relative))
            }
            for (relative, _) in afterFiles {
                let destination = graft.appendingPathComponent(relative)
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: after.appendingPathComponent(relative), to: destination)
            }
            // Control: the same method finds every value in an untouched copy of the store before the wipe,
            // so a zero below means nothing decrypts, not that the method cannot see anything.
            let control = work.appendingPathComponent("\(label)-control")
            try FileManager.default.copyItem(at: before, to: control)
            let controlHits = readable(keys, in: control)
            report.record("\(label).control_readable_before_wipe", controlHits)
            report.expect(controlHits == keys.count, "\(label): control read \(controlHits) of \(keys.count) values")
            let oldEpochHits = readable(keys, in: graft, keepingMetadataOf: before, afterFiles: afterFiles)
            report.record("\(label).decryptable_under_old_epoch", oldEpochHits)
            report.expect(oldEpochHits == 0, "\(label): \(oldEpochHits) leftover files decrypt under the old epoch")
        } catch {
            report.fail("\(label): could not build the old-epoch graft: \(error)")
        }
    }

    /// How many of `keys` a cache opened on `directory` with the master key returns a value for.
    private static func readable(_ keys: [String], in directory: URL) -> Int {
        guard let cache = try? Store.open(directory) else { return 0 }
        return keys.filter { ((try? cache.value(forKey: $0)) ?? nil) != nil }.count
    }

    /// Like `readable`, but first restores the old epoch's metadata over the grafted files, so the files the
    /// wipe left are judged under the keys of the store as it was before the wipe.
    private static func readable(
        _ keys: [String], in graft: URL, keepingMetadataOf before: URL, afterFiles: [String: Int]
    ) -> Int {
        for (relative, _) in Store.files(under: before) where afterFiles[relative] != nil {
            let source = before.appendingPathComponent(relative)
            let destination = graft.appendingPathComponent(relative)
            guard let old = try? Data(contentsOf: source), let new = try? Data(contentsOf: destination), old != new
            else { continue }
            // A file both before and after the wipe but changed by it is store metadata (the epoch record):
            // put the old one back so the old epoch's keys are the ones in force.
            try? old.write(to: destination)
        }
        return readable(keys, in: graft)
    }

    /// Occurrences of any needle in any file under `directory`.
    private static func scan(_ directory: URL, for needles: [Data]) -> Int {
        var hits = 0
        for (relative, _) in Store.files(under: directory) {
            guard let bytes = try? Data(contentsOf: directory.appendingPathComponent(relative)) else { continue }
            for needle in needles where !needle.isEmpty && bytes.range(of: needle) != nil { hits += 1 }
        }
        return hits
    }
}
