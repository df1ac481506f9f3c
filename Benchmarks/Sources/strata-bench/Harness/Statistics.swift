/// Order statistics of one series of per-round measurements.
struct Summary: Sendable {
    /// The measurements in the order they were taken.
    let samples: [Double]
    let median: Double
    let minimum: Double
    let maximum: Double
    /// The 25th and 75th percentiles (linear interpolation between closest ranks).
    let lowerQuartile: Double
    let upperQuartile: Double

    init(_ samples: [Double]) {
        self.samples = samples
        let sorted = samples.sorted()
        median = Summary.percentile(sorted, 0.5)
        minimum = sorted.first ?? .nan
        maximum = sorted.last ?? .nan
        lowerQuartile = Summary.percentile(sorted, 0.25)
        upperQuartile = Summary.percentile(sorted, 0.75)
    }

    /// A summary of one deterministic value (hit ratios, byte counts).
    init(exactly value: Double) { self.init([value]) }

    private static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        let weight = position - Double(lower)
        return sorted[lower] * (1 - weight) + sorted[upper] * weight
    }

    /// Half the interquartile range relative to the median: a robust noise figure for the report.
    var relativeSpread: Double {
        guard median != 0, samples.count > 1 else { return 0 }
        return (upperQuartile - lowerQuartile) / 2 / abs(median)
    }
}
