#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The progress line of a long store-wide command (`verify`, `clear`) on a terminal:
/// `strata: verifying 1200/5000 entries, 2400/s`, rewritten in place with `\r` and erased at the end.
///
/// It is drawn only when stderr is a terminal, and only once the work has run for `delay` seconds (a quick
/// command should not flash a line), then at most every tenth of a second. Where stderr is a pipe or a
/// file it writes nothing at all, so logs and `2>&1` captures get exactly what they got before.
///
/// Used from the one thread that runs the command; a class so that the library's progress callback can
/// update it. Not thread-safe.
final class ProgressLine {
    private let verb: String
    private let isEnabled: Bool
    private let delay: Double
    private let now: () -> Double
    private let write: (String) -> Void
    private let start: Double
    private var lastDrawn: Double?

    /// Creates the line.
    ///
    /// - Parameters:
    ///   - verb: What is being done, as the line says it (`verifying`, `clearing`).
    ///   - isTerminal: Whether stderr is a terminal (`StandardStreams.isTerminal(STDERR_FILENO)`); when
    ///     `false` nothing is ever written.
    ///   - delay: Seconds of work before the line first appears (default 1).
    ///   - now: A monotonic clock in seconds (default `CLOCK_MONOTONIC`); tests pass their own.
    ///   - write: Where the text goes (default stderr, unbuffered).
    init(
        verb: String, isTerminal: Bool, delay: Double = 1, now: @escaping () -> Double = ProgressLine.monotonicSeconds,
        write: @escaping (String) -> Void = { StandardStreams.write(Data($0.utf8), to: STDERR_FILENO) }
    ) {
        self.verb = verb
        self.isEnabled = isTerminal
        self.delay = delay
        self.now = now
        self.write = write
        self.start = now()
    }

    /// Redraws the line for `done` of `total` entries, if it is due.
    ///
    /// - Parameters:
    ///   - done: Entries handled so far.
    ///   - total: Entries to handle.
    func update(done: Int, total: Int) {
        guard isEnabled else { return }
        let time = now()
        guard time - start >= delay, time - (lastDrawn ?? -.infinity) >= 0.1 else { return }
        lastDrawn = time
        write("\r" + Self.text(verb: verb, done: done, total: total, seconds: time - start) + "\u{1B}[K")
    }

    /// Erases the line, if one was drawn, so what follows starts on a clean line.
    func finish() {
        if lastDrawn != nil { write("\r\u{1B}[K") }
    }

    /// The line's text: `strata: VERB DONE/TOTAL entries, RATE/s`, the rate in whole entries per second
    /// since the start.
    ///
    /// - Parameters:
    ///   - verb: What is being done.
    ///   - done: Entries handled so far.
    ///   - total: Entries to handle.
    ///   - seconds: Seconds since the start (more than 0).
    /// - Returns: The text, without `\r` or the erase sequence.
    static func text(verb: String, done: Int, total: Int, seconds: Double) -> String {
        let rate = seconds > 0 ? Int((Double(done) / seconds).rounded()) : 0
        return "strata: \(verb) \(done)/\(total) entries, \(rate)/s"
    }

    /// Seconds on `CLOCK_MONOTONIC`, which a change of the wall clock does not move.
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
