/// What a scenario measures in.
enum MetricUnit: String, Sendable {
    case nanosecondsPerOperation = "ns/op"
    case megabytesPerSecond = "MB/s"
    case operationsPerSecond = "ops/s"
    case millionOperationsPerSecond = "Mops/s"
    case bytesPerEntry = "B/entry"
    case milliseconds = "ms"
    case percentHits = "% hits"
    case peakBytesPerValueByte = "B/value B"

    /// Whether a larger number is the better one (throughputs); the ratio is then inverted so that it
    /// always reads as Strata's cost relative to the baseline's.
    var higherIsBetter: Bool {
        switch self {
        case .megabytesPerSecond, .operationsPerSecond, .millionOperationsPerSecond: return true
        case .nanosecondsPerOperation, .bytesPerEntry, .milliseconds, .percentHits, .peakBytesPerValueByte: return false
        }
    }
}

/// A scenario's goal, stated as text for the report and checked against the measured result.
struct Target: Sendable {
    let description: String
    let check: @Sendable (ScenarioResult) -> Bool

    /// Met when Strata's cost is at most `limit` times the baseline's.
    static func ratioAtMost(_ limit: Double) -> Target {
        Target(description: "ratio ≤ \(formatLimit(limit))") { $0.ratio <= limit }
    }

    /// A result printed for information, with nothing to meet.
    static let none = Target(description: "—") { _ in true }
}

/// One row of the report: Strata's and the baseline's measurements side by side.
struct ScenarioResult: Sendable {
    let name: String
    let unit: MetricUnit
    let strata: Summary
    let baseline: Summary
    /// Strata's cost over the baseline's (ns/op over ns/op, or baseline MB/s over Strata's MB/s): lower is
    /// better whatever the unit, except for hit ratios, where it is Strata's hit ratio over the reference's.
    let ratio: Double
    let target: Target
    /// Extra figures worth printing beside the row (for example NSCache's hit ratio on the same trace).
    let extras: [(label: String, value: Double)]
    let notes: [String]

    init(
        name: String,
        unit: MetricUnit,
        strata: Summary,
        baseline: Summary,
        ratio: Double? = nil,
        target: Target,
        extras: [(label: String, value: Double)] = [],
        notes: [String] = []
    ) {
        self.name = name
        self.unit = unit
        self.strata = strata
        self.baseline = baseline
        self.ratio =
            ratio ?? (unit.higherIsBetter ? baseline.median / strata.median : strata.median / baseline.median)
        self.target = target
        self.extras = extras
        self.notes = notes
    }

    /// Whether the target is met; `nil` for a row without a target.
    var met: Bool? {
        target.description == Target.none.description ? nil : target.check(self)
    }
}

/// Formats a measurement with about four significant digits.
func formatNumber(_ value: Double) -> String {
    guard value.isFinite else { return "n/a" }
    let magnitude = abs(value)
    let decimals: Int
    switch magnitude {
    case 1000...: decimals = 0
    case 100..<1000: decimals = 1
    case 10..<100: decimals = 2
    case 1..<10: decimals = 3
    default: decimals = 4
    }
    var text = String(Int((value * pow10(decimals)).rounded()))
    if decimals > 0 {
        let negative = text.hasPrefix("-")
        if negative { text.removeFirst() }
        while text.count <= decimals { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -decimals))
        if negative { text = "-" + text }
    }
    return text
}

private func pow10(_ exponent: Int) -> Double {
    var result = 1.0
    for _ in 0..<exponent { result *= 10 }
    return result
}

/// Formats a target's limit with no trailing zeros ("1.3", "2", "0.77").
func formatLimit(_ value: Double) -> String {
    var text = formatNumber(value)
    if text.contains(".") {
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
    }
    return text
}
