import Foundation
import StrataTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The parts of a crash scenario's round that ``CrashConsistency`` and ``SQLiteCrash`` share: the writer
/// child killed at a random moment, the checker child that reads what the kill left, and the writer's log.
enum CrashRound {
    /// Runs this executable with `arguments` and kills it with SIGKILL `delay` microseconds after its start.
    ///
    /// The kill comes from a Dispatch timer while this thread waits for the child's exit, so nothing sleeps.
    ///
    /// - Parameter mayFinish: Whether exiting 0 before the kill is right (a migration may finish in time).
    /// - Returns: `nil` when the writer ended as it should, else the failure to report: how it ended and
    ///   what it printed.
    static func killWriter(
        _ arguments: [String], afterMicroseconds delay: Int, iteration: Int, mayFinish: Bool = false
    ) throws -> String? {
        let writer = try runProcess(selfExecutable, arguments, timeout: Double(delay) / 1_000_000)
        let killed = writer.signaled && writer.status == SIGKILL
        guard !killed && !(mayFinish && !writer.signaled && writer.status == 0) else { return nil }
        return "writer \(iteration) ended with status \(writer.status) (signaled \(writer.signaled)): "
            + String(decoding: writer.stdout + writer.stderr, as: UTF8.self)
    }

    /// Runs the checker child of `iteration` and parses its output into figures.
    ///
    /// A checker that exits other than 0, dies by a signal, or prints no figures counts as a crash: it is
    /// reported on `report`, and the result is `nil`. The problems the figures carry are reported too.
    ///
    /// - Parameter timeout: Seconds after which the checker is killed (and so counts as a crash); `nil` waits.
    static func check<Figures: CrashCheckFigures>(
        _ arguments: [String], iteration: Int, timeout: Double? = nil, report: Report
    ) throws -> Figures? {
        let check = try runProcess(selfExecutable, arguments, timeout: timeout)
        let output = String(decoding: check.stdout, as: UTF8.self)
        guard check.status == 0, !check.signaled, let figures = Figures(output: output) else {
            report.fail(
                "checker \(iteration) status \(check.status) signaled \(check.signaled): "
                    + output + String(decoding: check.stderr, as: UTF8.self))
            return nil
        }
        for problem in figures.problems { report.fail("iteration \(iteration): \(problem)") }
        return figures
    }
}

/// What a crash scenario's checker prints as its output and the parent adds up.
protocol CrashCheckFigures {
    /// Parses a checker's whole output; `nil` when it holds no figures line.
    init?(output: String)
    /// Broken expectations, each one line.
    var problems: [String] { get }
}

/// The writer child's start: its key count, the first version it writes, its generator, and its log.
///
/// The log takes `B …` before and `A …` after each operation with unbuffered `write(2)`, whose bytes the
/// kernel holds once the call returns, so they survive the SIGKILL that ends the writer.
struct CrashWriter {
    /// `--keys`.
    let keyCount: Int
    /// `--base`: the first version of this writer (each round's writer starts a million versions later).
    let base: UInt64
    /// Seeded with `--seed`.
    var generator: SplitMix64
    private let ack: Int32

    /// Reads the writer's options and opens (appending) the log at `--ack`.
    init(_ options: Options) throws {
        keyCount = try options.int("keys", default: 64)
        base = UInt64(try options.int("base", default: 1))
        generator = SplitMix64(seed: UInt64(try options.int("seed", default: 1)))
        ack = open(try options.string("ack"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard ack >= 0 else { throw HarnessError("cannot open ack log") }
    }

    /// Appends `line` to the log with one `write(2)`.
    func log(_ line: String) {
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(ack, $0.baseAddress, $0.count) }
    }
}
