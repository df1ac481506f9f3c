/// Runs Strata's batch and its baseline's batch in alternating rounds, after untimed warm-up rounds.
///
/// Each round runs both batches once, and the order flips every round (Strata first in even rounds,
/// the baseline first in odd ones), so that a slow drift of the machine — another process building,
/// the CPU clock changing, the page cache filling — lands on both sides alike instead of on whichever
/// ran second. Each batch closure does its own timing and returns one measurement (ns/op, MB/s, ...),
/// so that setup the batch needs (fresh keys, a reopened store) can stay outside its timed region.
struct AlternatingRounds: Sendable {
    var warmUpRounds: Int
    var rounds: Int

    func run(
        strata: () throws -> Double,
        baseline: () throws -> Double
    ) rethrows -> (strata: Summary, baseline: Summary) {
        for _ in 0..<warmUpRounds {
            _ = try strata()
            _ = try baseline()
        }
        var strataSamples: [Double] = []
        var baselineSamples: [Double] = []
        for round in 0..<rounds {
            if round.isMultiple(of: 2) {
                strataSamples.append(try strata())
                baselineSamples.append(try baseline())
            } else {
                baselineSamples.append(try baseline())
                strataSamples.append(try strata())
            }
        }
        return (Summary(strataSamples), Summary(baselineSamples))
    }

    func runAsync(
        strata: () async throws -> Double,
        baseline: () async throws -> Double
    ) async rethrows -> (strata: Summary, baseline: Summary) {
        for _ in 0..<warmUpRounds {
            _ = try await strata()
            _ = try await baseline()
        }
        var strataSamples: [Double] = []
        var baselineSamples: [Double] = []
        for round in 0..<rounds {
            if round.isMultiple(of: 2) {
                strataSamples.append(try await strata())
                baselineSamples.append(try await baseline())
            } else {
                baselineSamples.append(try await baseline())
                strataSamples.append(try await strata())
            }
        }
        return (Summary(strataSamples), Summary(baselineSamples))
    }
}
