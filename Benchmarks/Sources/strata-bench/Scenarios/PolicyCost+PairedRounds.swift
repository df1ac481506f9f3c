import Foundation

/// How the policy cost rows are measured on a shared machine.
///
/// The two sides strictly alternate, A B A B … (Strata, then the baseline, in every round), and each
/// row's ratio is the median of the per-round ratios, reported with their quartiles and extremes. A
/// burst of load from another process then lands on both halves of the rounds it covers, and the
/// median ignores the rounds it distorts; the ratio of two medians (what `AlternatingRounds` reports)
/// throws that pairing away.
///
/// Strictly alternating, not A B B A as `AlternatingRounds` does: flipping the order makes each side run
/// twice in a row at every other round boundary, so in every round one side starts with its own data
/// still in the level-2 cache and the other with its rival's. Measured on policy-get-hit, the per-round
/// ratio was then 0.93–0.96 in rounds where W-TinyLFU ran warm and 1.37–1.41 where LRU did, and the
/// median of the mixture landed anywhere between the two. Strictly alternating, every timed batch
/// follows the other side's, so both start equally cold.
///
/// The single-threaded rows time each batch in the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not
/// wall-clock time: on two cores shared with other engineers' builds (load averages of 4 to 10) a batch
/// of tens of milliseconds is descheduled several times, and wall-clock time counts those gaps as the
/// cache's. CPU time still carries what the neighbours do to the caches and the memory bus, but not the
/// time they hold the core. The wall-clock ratio is printed beside it.
extension PolicyCost {
    /// The round plan of the policy cost rows: more rounds than the default (each round is short), so
    /// that the median of the per-round ratios is stable. On the shared machine single rounds of
    /// policy-get-hit spread by ±25% (quartiles of the per-round ratio 0.94–1.44 at load 6), so its
    /// median needs about a hundred rounds to settle within a few hundredths.
    static func pairedRounds(_ context: RunContext, full: Int = 31) -> AlternatingRounds {
        AlternatingRounds(warmUpRounds: context.quick ? 2 : 3, rounds: context.quick ? 9 : full)
    }

    /// Runs `strata` and `baseline` strictly alternating (see above) for `plan`'s warm-up and timed
    /// rounds; returns each side's measurements in round order.
    static func interleave(
        _ plan: AlternatingRounds, strata: () throws -> Double, baseline: () throws -> Double
    ) rethrows -> (strata: Summary, baseline: Summary) {
        for _ in 0..<plan.warmUpRounds {
            _ = try strata()
            _ = try baseline()
        }
        var strataSamples: [Double] = []
        var baselineSamples: [Double] = []
        for _ in 0..<plan.rounds {
            strataSamples.append(try strata())
            baselineSamples.append(try baseline())
        }
        return (Summary(strataSamples), Summary(baselineSamples))
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
            + "round timing Strata then the baseline (A B A B …) in "
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
