import Foundation

/// A request trace whose key popularity follows a Zipf law: key of rank r is requested with probability
/// proportional to 1 / r^s. With s near 1 this is the skew usually assumed for web and CDN caches
/// (Breslau et al., "Web Caching and Zipf-like Distributions", INFOCOM 1999).
enum ZipfTrace {
    /// `length` key ids in `0..<keyCount`, drawn by inverting the cumulative distribution with a binary
    /// search. Ranks are mapped to ids through a seeded permutation, so popularity is unrelated to the
    /// numeric key (and so to its hash).
    static func make(keyCount: Int, length: Int, exponent: Double, seed: UInt64) -> [Int] {
        var cumulative = [Double](repeating: 0, count: keyCount)
        var total = 0.0
        for rank in 0..<keyCount {
            total += 1 / pow(Double(rank + 1), exponent)
            cumulative[rank] = total
        }
        let idOfRank = [Int].shuffledIndices(keyCount, seed: seed ^ 0xA5A5_A5A5)
        var generator = SplitMix64(seed: seed)
        var trace = [Int]()
        trace.reserveCapacity(length)
        for _ in 0..<length {
            let target = Double.random(in: 0..<total, using: &generator)
            var low = 0
            var high = keyCount - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] > target { high = middle } else { low = middle + 1 }
            }
            trace.append(idOfRank[low])
        }
        return trace
    }
}
