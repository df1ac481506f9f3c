extension AlternatingRounds {
    /// Runs Strata's, the baseline's and (where there is one) the floor's batches in rotating order.
    ///
    /// With a floor, round `r` starts with batch `r mod 3` of (Strata, baseline, floor) and runs the
    /// other two after it in that cyclic order, so each variant leads, follows and sits in the middle
    /// equally often over three rounds and the machine's drift lands on all three alike. Without a floor
    /// (a platform without libcrypto) this is ``run(strata:baseline:)``.
    func run(
        strata: () throws -> Double,
        baseline: () throws -> Double,
        floor: (() throws -> Double)?
    ) throws -> (strata: Summary, baseline: Summary, floor: Summary?) {
        guard let floor else {
            let (strataSummary, baselineSummary) = try run(strata: strata, baseline: baseline)
            return (strataSummary, baselineSummary, nil)
        }
        func runBatch(_ variant: Int) throws -> Double {
            switch variant {
            case 0: return try strata()
            case 1: return try baseline()
            default: return try floor()
            }
        }
        for _ in 0..<warmUpRounds {
            for variant in 0..<3 { _ = try runBatch(variant) }
        }
        var samples: [[Double]] = [[], [], []]
        for round in 0..<rounds {
            for step in 0..<3 {
                let variant = (round + step) % 3
                samples[variant].append(try runBatch(variant))
            }
        }
        return (Summary(samples[0]), Summary(samples[1]), Summary(samples[2]))
    }
}
