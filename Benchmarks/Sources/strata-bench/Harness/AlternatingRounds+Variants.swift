extension AlternatingRounds {
    /// Runs any number of batches in rotating order and returns one summary per batch, in `variants`' order.
    ///
    /// Round `r` starts with batch `r mod n` and runs the others after it in cyclic order, so over `n` rounds
    /// each batch leads, follows and sits in every middle place once, and the machine's drift lands on all of
    /// them alike (for three batches this is the order of ``run(strata:baseline:floor:)``). Used where one
    /// workload is measured on more than Strata, its baseline and the floor — for example both disk engines
    /// beside plain file I/O — so that every row compares figures taken in the same rounds.
    func run(variants: [() throws -> Double]) throws -> [Summary] {
        let count = variants.count
        guard count > 0 else { return [] }
        for _ in 0..<warmUpRounds {
            for variant in variants { _ = try variant() }
        }
        var samples = [[Double]](repeating: [], count: count)
        for round in 0..<rounds {
            for step in 0..<count {
                let index = (round + step) % count
                samples[index].append(try variants[index]())
            }
        }
        return samples.map { Summary($0) }
    }
}
