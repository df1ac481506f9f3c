import Foundation

/// How the policy cost rows are measured on a shared machine.
///
/// `AlternatingRounds` already runs the two sides back to back in every round (A B, B A, A B, …), so a
/// round's two measurements saw the same background load. The ratio of the two medians throws that
/// pairing away: a burst of load that hit the W-TinyLFU half of one round and the LRU half of another
/// moves both medians apart. These rows take the ratio within each round instead and report the median
/// of those per-round ratios with their spread, which is what a noisy neighbour moves least.
///
/// The single-threaded rows time each batch in the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not
/// wall-clock time: on two cores shared with other engineers' builds (load averages of 5 to 10) a batch
/// of 70 ms is descheduled several times, and wall-clock time counts those gaps as the cache's. CPU time
/// still carries what the neighbours do to the caches and the memory bus, but not the time they hold the
/// core. The wall-clock ratio is printed beside it.
extension PolicyCost {
    /// The round plan of the policy cost rows: more rounds than the default (each round is short), so
    /// that the median of the per-round ratios is stable.
    static func pairedRounds(_ context: RunContext) -> AlternatingRounds {
        AlternatingRounds(warmUpRounds: context.quick ? 2 : 3, rounds: context.quick ? 9 : 31)
    }

    /// The per-round ratios of two series taken by `AlternatingRounds` (round *i* of one with round *i*
    /// of the other), as Strata's cost over the baseline's: ns/op over ns/op, or the baseline's throughput
    /// over Strata's when `higherIsBetter`.
    static func perRoundRatios(_ strata: Summary, _ baseline: Summary, higherIsBetter: Bool) -> Summary {
        let ratios = zip(strata.samples, baseline.samples).map { strata, baseline in
            higherIsBetter ? baseline / strata : strata / baseline
        }
        return Summary(ratios)
    }

    /// The extras that say how a paired row was measured: the per-round ratios' spread and the machine's
    /// load average (1 minute, from `/proc/loadavg`) before and after.
    static func pairedExtras(
        _ ratios: Summary, loadBefore: Double?, loadAfter: Double?
    ) -> [(
        label: String, value: Double
    )] {
        var extras: [(label: String, value: Double)] = [
            ("per-round ratio: median", ratios.median),
            ("per-round ratio: lower quartile", ratios.lowerQuartile),
            ("per-round ratio: upper quartile", ratios.upperQuartile),
            ("per-round ratio: minimum", ratios.minimum),
            ("per-round ratio: maximum", ratios.maximum),
            ("rounds", Double(ratios.samples.count)),
        ]
        if let loadBefore { extras.append(("load average before (1 min)", loadBefore)) }
        if let loadAfter { extras.append(("load average after (1 min)", loadAfter)) }
        return extras
    }

    /// The note printed under a paired row.
    static func pairedNote(_ rounds: AlternatingRounds, cpuTime: Bool) -> String {
        "measured: \(rounds.rounds) rounds after \(rounds.warmUpRounds) warm-up rounds in one process, each "
            + "round timing both sides back to back (order flipped every round) in "
            + (cpuTime ? "the thread's CPU time" : "wall-clock time")
            + "; ratio = median of the per-round ratios, spread = their quartiles and extremes"
    }

    /// Runs `body`, which performs `operations` operations, and returns the calling thread's CPU time per
    /// operation in nanoseconds; adds the wall-clock time per operation to `wallClock`.
    @inline(__always)
    static func cpuNanosecondsPerOperation(
        _ operations: Int, wallClock: inout [Double], _ body: () throws -> Void
    ) rethrows -> Double {
        let wallStart = monotonicNanoseconds()
        let start = threadCPUNanoseconds()
        try body()
        let cpu = threadCPUNanoseconds() - start
        wallClock.append(Double(monotonicNanoseconds() - wallStart) / Double(operations))
        return cpu / Double(operations)
    }

    /// The calling thread's CPU time in nanoseconds.
    static func threadCPUNanoseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
    }

    /// The 1-minute load average, or `nil` where `/proc/loadavg` cannot be read (not Linux).
    static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
            let first = text.split(separator: " ").first
        else { return nil }
        return Double(first)
    }
}
