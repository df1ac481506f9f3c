import CacheCore
import Foundation
import StrataTestSupport

/// Scenario 5: several `strata` processes share one store: set, get, rm and exec run concurrently for a
/// while, and afterwards no read was corrupt, `strata verify` is clean and the store is within its byte limit.
/// `--engine files` (the default) counts the entry files on disk against the limit; `--engine sqlite` audits
/// the database instead (integrity, stored totals against the rows, each large-value file against its row)
/// and checks the rows' bytes against the limit, with values up to 48 KiB so that some go to files.
///
/// Every value is a ``Payload`` (key and version inside), so a get that returns a torn or foreign value is
/// caught whatever the interleaving; `exec` runs a command whose stdout and stderr are derived from its
/// argument, so a replay can be checked too.
enum MultiProcess {
    private struct Tally {
        var operations: [String: Int] = [:]
        var hits = 0
        var misses = 0
        var wrong = 0
        var failures = 0
        var messages: [String] = []

        mutating func add(_ other: Tally) {
            operations.merge(other.operations, uniquingKeysWith: +)
            hits += other.hits
            misses += other.misses
            wrong += other.wrong
            failures += other.failures
            messages += other.messages
        }

        mutating func fail(_ message: String) {
            failures += 1
            messages.append(message)
        }
    }

    static func run(_ options: Options) throws -> Int32 {
        let report = Report(scenario: "multiprocess")
        let strataExecutable = try options.url("strata")
        let workers = try options.int("workers", default: 4)
        let seconds = try options.int("seconds", default: 20)
        let keyCount = try options.int("keys", default: 24)
        let maxBytes = try options.int("max-bytes", default: 262_144)
        let seed = UInt64(try options.int("seed", default: 1))
        let engineName = try options.string("engine", default: "files")
        guard engineName == "files" || engineName == "sqlite" else {
            throw HarnessError("--engine wants files or sqlite, got \(engineName)")
        }
        let onSQLite = engineName == "sqlite"
        let maximumValue = onSQLite ? 49_152 : 24_576
        let work = try TemporaryFolder.make(label: "reliability-multiprocess")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store")
        // Created here so the tool opens it with the engine it records: a file store's limit is checked below
        // against its entry files on disk, a SQLite store's against its rows.
        _ = try Store.open(store, engine: onSQLite ? .sqlite : .files)
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_MASTER_KEY"] = Store.masterKeyBase64
        let common = ["--store", store.path, "--max-size", "\(maxBytes)"]
        let environmentCopy = environment

        @Sendable func runStrata(_ arguments: [String], stdin: Data? = nil) throws -> (Int32, Data, Data) {
            let result = try runProcess(strataExecutable, arguments, stdin: stdin, environment: environmentCopy)
            return (result.signaled ? 128 + result.status : result.status, result.stdout, result.stderr)
        }

        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        let tallies = Locked<Tally>(Tally())
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var generator = SplitMix64(seed: seed &* 1_000_003 &+ UInt64(worker))
            var tally = Tally()
            var counter: UInt64 = 0
            while Date() < deadline {
                let key = "mp-\(Int.random(in: 0..<keyCount, using: &generator))"
                let roll = Int.random(in: 0..<100, using: &generator)
                do {
                    if roll < 35 {
                        counter += 1
                        let version = UInt64(worker) << 40 | counter
                        let value = Payload.make(
                            key: key, version: version,
                            length: Payload.length(key: key, version: version, maximum: maximumValue))
                        let (status, _, errors) = try runStrata(common + ["set", key], stdin: value)
                        tally.operations["set", default: 0] += 1
                        if status != 0 {
                            tally.fail("set \(key) exited \(status): \(String(decoding: errors, as: UTF8.self))")
                        }
                    } else if roll < 70 {
                        let (status, output, errors) = try runStrata(common + ["get", key])
                        tally.operations["get", default: 0] += 1
                        if status == 1 {
                            tally.misses += 1
                        } else if status != 0 {
                            tally.fail("get \(key) exited \(status): \(String(decoding: errors, as: UTF8.self))")
                        } else if case .invalid(let why) = Payload.verify(output, expectedKey: key) {
                            tally.wrong += 1
                            tally.messages.append("get \(key) returned a wrong value: \(why)")
                        } else {
                            tally.hits += 1
                        }
                    } else if roll < 80 {
                        let (status, _, errors) = try runStrata(common + ["rm", key])
                        tally.operations["rm", default: 0] += 1
                        if status != 0 && status != 1 {
                            tally.fail("rm \(key) exited \(status): \(String(decoding: errors, as: UTF8.self))")
                        }
                    } else {
                        let script = "printf 'out-%s\\n' \"$1\"; printf 'err-%s\\n' \"$1\" >&2"
                        let (status, output, errors) = try runStrata(
                            common + ["exec", "--ttl", "30", "--", "/bin/sh", "-c", script, "sh", key])
                        tally.operations["exec", default: 0] += 1
                        let rightOutput = String(decoding: output, as: UTF8.self) == "out-\(key)\n"
                        let rightErrors = String(decoding: errors, as: UTF8.self) == "err-\(key)\n"
                        if status != 0 {
                            tally.fail("exec \(key) exited \(status): \(String(decoding: errors, as: UTF8.self))")
                        } else if !rightOutput || !rightErrors {
                            tally.wrong += 1
                            tally.messages.append(
                                "exec \(key) replayed stdout \(output.count) B, stderr \(errors.count) B")
                        }
                    }
                } catch {
                    tally.fail("could not start strata: \(error)")
                }
            }
            tallies.withLock { $0.add(tally) }
        }
        let tally = tallies.withLock { $0 }

        let verify = try runStrata(["--store", store.path, "verify"])
        let stats = try runStrata(common + ["stats"])
        let files = Store.files(under: store)
        let totalBytes = files.values.reduce(0, +)
        let entryBytes = files.filter { Store.isEntry($0.key) }.values.reduce(0, +)
        let audit = onSQLite ? try SQLiteStoreAudit.audit(store) : nil
        let storedBytes = onSQLite ? Int(audit?.rowBytes ?? 0) : entryBytes

        report.record("engine", engineName)
        report.record("workers", workers)
        report.record("seconds", seconds)
        for (name, count) in tally.operations.sorted(by: { $0.key < $1.key }) { report.record("ops.\(name)", count) }
        report.record("ops.total", tally.operations.values.reduce(0, +))
        report.record("get_hits", tally.hits)
        report.record("get_misses", tally.misses)
        report.record("wrong_reads", tally.wrong)
        report.record("failed_commands", tally.failures)
        report.record("verify_status", verify.0)
        report.record(
            "verify_output",
            String(decoding: verify.1 + verify.2, as: UTF8.self).replacingOccurrences(of: "\n", with: " | "))
        report.record(
            "stats_output", String(decoding: stats.1, as: UTF8.self).replacingOccurrences(of: "\n", with: " | "))
        report.record("max_bytes", maxBytes)
        report.record("bytes_on_disk_all_files", totalBytes)
        report.record("files_on_disk", files.count)
        if let audit {
            report.record("rows", audit.rowCount)
            report.record("bytes_in_rows", audit.rowBytes)
            report.record("stored_totals", "\(audit.storedCount) entries, \(audit.storedBytes) B")
            report.record("large_value_files", audit.largeFiles)
            report.record("orphan_large_value_files", audit.orphanFiles)
            report.record("integrity_check", audit.integrity)
            for problem in audit.problems { report.fail("database audit: \(problem)") }
        } else if onSQLite {
            report.fail("the SQLite store has no database")
        } else {
            report.record("bytes_in_entry_files", entryBytes)
            report.record("entry_files_on_disk", files.keys.filter(Store.isEntry).count)
        }
        for message in tally.messages.prefix(20) { report.fail(message) }
        report.expect(tally.wrong == 0, "\(tally.wrong) wrong reads")
        report.expect(tally.failures == 0, "\(tally.failures) commands failed")
        report.expect(verify.0 == 0, "strata verify exited \(verify.0)")
        report.expect(storedBytes <= maxBytes, "\(storedBytes) bytes stored, limit \(maxBytes)")
        report.expect((tally.operations["get"] ?? 0) > 0 && tally.hits > 0, "no get ever hit: nothing was tested")
        return report.finish()
    }
}
