import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

/// Scenario 1: a writer killed with SIGKILL at a random moment never leaves a wrong value, loses no
/// acknowledged write, and leaves no temporary file once the store is opened again.
///
/// The parent starts `crash-writer` (a copy of this executable), schedules a SIGKILL 0–200 ms after the
/// start, then starts `crash-check` in another child so that a crash while opening or reading counts as a
/// crash instead of killing the harness. The writer logs `B key version` before and `A key version` after
/// each write with unbuffered `write(2)`, which survives SIGKILL; the checker turns that log into
/// expectations: a key's value must be its last acknowledged version or the one in flight.
enum CrashConsistency {
    static func run(_ options: Options) throws -> Int32 {
        try Scenario.run("crash", options, defaultKeys: 64) { scenario, generator in
            let (report, keyCount) = (scenario.report, scenario.keyCount)
            let iterations = try options.int("iterations", default: 200)
            let windowMicroseconds = try options.int("window-ms", default: 200) * 1000
            let state = scenario.work.appendingPathComponent("state.json")

            var totals = CheckFigures()
            var writerCrashes = 0
            var checkerCrashes = 0
            var killedBeforeFirstAck = 0
            for iteration in 0..<iterations {
                let ack = scenario.work.appendingPathComponent("ack-\(iteration)")
                let arguments = [
                    "crash-writer", "--store", scenario.store.path, "--keys", "\(keyCount)", "--ack", ack.path,
                    "--base", "\(UInt64(iteration + 1) * 1_000_000)", "--seed", "\(generator.next() % 1_000_000)",
                ]
                let delay = Int.random(in: 0..<windowMicroseconds, using: &generator)
                if let failure = try CrashRound.killWriter(arguments, afterMicroseconds: delay, iteration: iteration) {
                    writerCrashes += 1
                    report.fail(failure)
                }
                if ((try? Data(contentsOf: ack)) ?? Data()).isEmpty { killedBeforeFirstAck += 1 }

                let checkArguments = [
                    "crash-check", "--store", scenario.store.path, "--keys", "\(keyCount)", "--ack", ack.path,
                    "--state", state.path,
                ]
                guard
                    let figures: CheckFigures = try CrashRound.check(
                        checkArguments, iteration: iteration, report: report)
                else {
                    checkerCrashes += 1
                    continue
                }
                totals.add(figures)
            }
            report.record("iterations", iterations)
            report.record("keys", keyCount)
            report.record("kill_window_ms", windowMicroseconds / 1000)
            report.record("acknowledged_writes", totals.acknowledgedWrites)
            report.record("killed_before_first_write", killedBeforeFirstAck)
            report.record("reads", totals.reads)
            report.record("wrong_values", totals.wrong)
            report.record("read_errors", totals.errors)
            report.record("keys_complete", totals.complete)
            report.record("keys_complete_in_flight_version", totals.inFlight)
            report.record("keys_missing", totals.missing)
            report.record("keys_never_written", totals.neverWritten)
            report.record("temp_files_after_open", totals.tempFiles)
            report.record("writer_crashes", writerCrashes)
            report.record("checker_crashes", checkerCrashes)
            report.expect(totals.wrong == 0, "\(totals.wrong) wrong values")
            report.expect(totals.missing == 0, "\(totals.missing) acknowledged keys missing")
            report.expect(totals.errors == 0, "\(totals.errors) read errors")
            report.expect(totals.tempFiles == 0, "\(totals.tempFiles) temporary files left after open")
            report.expect(totals.acknowledgedWrites > 0, "the writer never completed a write: nothing was tested")
        }
    }

    // MARK: - Writer

    /// Writes every key round after round until killed; never returns normally.
    static func writer(_ options: Options) throws -> Int32 {
        var writer = try CrashWriter(options)
        let cache = try Store.open(try options.url("store"))
        var round: UInt64 = 0
        while true {
            let version = writer.base + round
            for index in (0..<writer.keyCount).shuffled(using: &writer.generator) {
                let key = Store.key(index)
                writer.log("B \(index) \(version)\n")
                let value = Payload.make(
                    key: key, version: version, length: Payload.length(key: key, version: version, maximum: 8192))
                try cache.setValue(value, forKey: key, expiry: .never)
                writer.log("A \(index) \(version)\n")
            }
            round += 1
        }
    }

    // MARK: - Checker

    /// Opens the store, checks for temporary files, reads every key against the expectations, prints one
    /// line of figures and saves the updated expectations.
    static func check(_ options: Options) throws -> Int32 {
        let keyCount = try options.int("keys", default: 64)
        let stateURL = try options.url("state")
        var acknowledged = (try? JSONDecoder().decode([Int: UInt64].self, from: Data(contentsOf: stateURL))) ?? [:]
        var inFlight: [Int: UInt64] = [:]
        var figures = CheckFigures()
        let log = String(decoding: (try? Data(contentsOf: try options.url("ack"))) ?? Data(), as: UTF8.self)
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let index = Int(parts[1]), let version = UInt64(parts[2]) else { continue }
            if parts[0] == "A" {
                acknowledged[index] = version
                inFlight[index] = nil
                figures.acknowledgedWrites += 1
            } else {
                inFlight[index] = version
            }
        }

        let directory = try options.url("store")
        let cache = try Store.open(directory)
        let leftovers = Store.files(under: directory).keys.filter(Store.isTemporary)
        figures.tempFiles = leftovers.count
        if !leftovers.isEmpty { figures.problems.append("temporary files after open: \(leftovers.sorted())") }

        for index in 0..<keyCount {
            let key = Store.key(index)
            figures.reads += 1
            let value: Data?
            do {
                value = try cache.value(forKey: key)
            } catch {
                figures.errors += 1
                figures.problems.append("\(key): read threw \(error)")
                continue
            }
            let expected = acknowledged[index]
            guard let value else {
                if expected == nil {
                    figures.neverWritten += 1
                } else {
                    figures.missing += 1
                    figures.problems.append("\(key): acknowledged version \(expected ?? 0) missing")
                }
                continue
            }
            switch Payload.verify(value, expectedKey: key) {
            case .invalid(let why):
                figures.wrong += 1
                figures.problems.append("\(key): wrong value: \(why)")
            case .valid(let version) where version == expected:
                figures.complete += 1
            case .valid(let version) where version == inFlight[index]:
                // The write finished its rename but was killed before logging it: the new value is right.
                figures.complete += 1
                figures.inFlight += 1
                acknowledged[index] = version
            case .valid(let version):
                figures.wrong += 1
                figures.problems.append(
                    "\(key): stale or unknown version \(version), expected \(expected.map(String.init) ?? "none")"
                        + " or in-flight \(inFlight[index].map(String.init) ?? "none")")
            }
        }
        try JSONEncoder().encode(acknowledged).write(to: stateURL)
        print(figures.line)
        return 0
    }
}

/// What one checker run found; travels from the checker to the parent as one text line.
struct CheckFigures: CrashCheckFigures {
    var acknowledgedWrites = 0
    var reads = 0
    var wrong = 0
    var errors = 0
    var complete = 0
    var inFlight = 0
    var missing = 0
    var neverWritten = 0
    var tempFiles = 0
    var problems: [String] = []

    init() {}

    private var numbers: [Int] {
        [acknowledgedWrites, reads, wrong, errors, complete, inFlight, missing, neverWritten, tempFiles]
    }

    var line: String {
        (["check"] + numbers.map(String.init)).joined(separator: " ")
            + problems.map { "\nproblem \($0)" }.joined()
    }

    init?(output text: String) {
        let lines = text.split(separator: "\n")
        guard let first = lines.first(where: { $0.hasPrefix("check ") }) else { return nil }
        let values = first.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard values.count == 9 else { return nil }
        (acknowledgedWrites, reads, wrong, errors, complete) = (values[0], values[1], values[2], values[3], values[4])
        (inFlight, missing, neverWritten, tempFiles) = (values[5], values[6], values[7], values[8])
        problems = lines.filter { $0.hasPrefix("problem ") }.map { String($0.dropFirst(8)) }
    }

    mutating func add(_ other: CheckFigures) {
        acknowledgedWrites += other.acknowledgedWrites
        reads += other.reads
        wrong += other.wrong
        errors += other.errors
        complete += other.complete
        inFlight += other.inFlight
        missing += other.missing
        neverWritten += other.neverWritten
        tempFiles += other.tempFiles
    }
}
