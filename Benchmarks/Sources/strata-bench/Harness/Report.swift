import Foundation

/// Prints result rows as a table and writes them as JSON.
enum Report {
    static let header =
        pad("scenario", 28) + pad("unit", 9) + pad("strata median [min–max]", 30)
        + pad("baseline median [min–max]", 30) + pad("ratio", 8) + pad("target", 34) + "result"

    static func line(for result: ScenarioResult) -> String {
        let verdict: String
        switch result.met {
        case .some(true): verdict = "met"
        case .some(false): verdict = "MISSED"
        case .none: verdict = "(info)"
        }
        return pad(result.name, 28) + pad(result.unit.rawValue, 9) + pad(describe(result.strata), 30)
            + pad(describe(result.baseline), 30) + pad(formatNumber(result.ratio), 8)
            + pad(result.target.description, 34) + verdict
    }

    /// The indented lines printed under a row: spread, extras and notes.
    static func details(for result: ScenarioResult) -> [String] {
        var lines: [String] = []
        if result.strata.samples.count > 1 {
            lines.append(
                "IQR strata \(formatNumber(result.strata.lowerQuartile))–\(formatNumber(result.strata.upperQuartile)), "
                    + "baseline \(formatNumber(result.baseline.lowerQuartile))–"
                    + "\(formatNumber(result.baseline.upperQuartile)) over \(result.strata.samples.count) rounds"
            )
        }
        for extra in result.extras {
            lines.append("\(extra.label): \(formatNumber(extra.value))")
        }
        lines += result.notes
        return lines.map { "    " + $0 }
    }

    /// A Markdown table of the rows, as pasted into Docs/Performance.md.
    static func markdown(_ results: [ScenarioResult]) -> String {
        var text =
            "| scenario | unit | Strata median [min–max] | baseline median [min–max] | ratio | target | result |\n"
        text += "|---|---|---|---|---|---|---|\n"
        for result in results {
            let verdict = result.met.map { $0 ? "met" : "**missed**" } ?? "info"
            text +=
                "| \(result.name) | \(result.unit.rawValue) | \(describe(result.strata)) | "
                + "\(describe(result.baseline)) | \(formatNumber(result.ratio)) | \(result.target.description) | "
                + "\(verdict) |\n"
        }
        return text
    }

    static func writeJSON(_ results: [ScenarioResult], to path: String) throws {
        let objects = results.map(JSONRow.init)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let data = try encoder.encode(objects)
        try data.write(to: URL(fileURLWithPath: path))
    }

    private static func describe(_ summary: Summary) -> String {
        if summary.samples.count <= 1 { return formatNumber(summary.median) }
        return "\(formatNumber(summary.median)) [\(formatNumber(summary.minimum))–\(formatNumber(summary.maximum))]"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

/// The JSON form of one row: the fields the brief fixes, plus the spread and any extras.
private struct JSONRow: Encodable {
    let name: String
    let unit: String
    let strata: Double
    let baseline: Double
    let ratio: Double
    let target: String
    let met: Bool?
    let strataMin: Double
    let strataMax: Double
    let baselineMin: Double
    let baselineMax: Double
    let rounds: Int
    let extras: [String: Double]

    init(_ result: ScenarioResult) {
        name = result.name
        unit = result.unit.rawValue
        strata = result.strata.median
        baseline = result.baseline.median
        ratio = result.ratio
        target = result.target.description
        met = result.met
        strataMin = result.strata.minimum
        strataMax = result.strata.maximum
        baselineMin = result.baseline.minimum
        baselineMax = result.baseline.maximum
        rounds = result.strata.samples.count
        extras = Dictionary(result.extras.map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    enum CodingKeys: String, CodingKey {
        case name, unit, strata, baseline, ratio, target, met, strataMin, strataMax, baselineMin, baselineMax
        case rounds, extras
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(unit, forKey: .unit)
        try container.encode(strata, forKey: .strata)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(target, forKey: .target)
        // `met` is written as null for information-only rows, so every object has the same fields.
        try container.encode(met, forKey: .met)
        try container.encode(strataMin, forKey: .strataMin)
        try container.encode(strataMax, forKey: .strataMax)
        try container.encode(baselineMin, forKey: .baselineMin)
        try container.encode(baselineMax, forKey: .baselineMax)
        try container.encode(rounds, forKey: .rounds)
        try container.encode(extras, forKey: .extras)
    }
}
