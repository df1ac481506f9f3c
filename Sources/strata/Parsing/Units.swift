#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parsers for the tool's durations, sizes and counts.
///
/// Every parser throws a one-line reason on bad input; the caller wraps it into a usage error
/// (exit status 2) that names the option.
enum Units {
    /// Seconds per duration unit. A bare number is seconds too.
    private static let durationUnits: [String: Double] = [
        "ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800,
    ]

    /// Bytes per size unit: `K`, `KB`, `M`, `MB`, … are decimal (powers of 1000, as disk vendors and
    /// the SI use them), `KiB`, `MiB`, … binary (powers of 1024, IEC 80000-13). Case-insensitive.
    private static let sizeUnits: [String: Double] = [
        "": 1, "b": 1,
        "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
        "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
    ]

    /// The unit a spelled-out word stands for (`minutes` → `m`, `sec` → `s`), or `nil` when the word is not a
    /// time unit. Used only to explain a mistake, never to parse a duration.
    ///
    /// - Parameter word: A command-line word.
    /// - Returns: The short unit `duration(_:)` accepts, or `nil`.
    static func durationUnit(named word: String) -> String? {
        let spelled: [String: String] = [
            "ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms",
            "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
            "m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
            "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
            "d": "d", "day": "d", "days": "d", "w": "w", "week": "w", "weeks": "w",
        ]
        return spelled[word.lowercased()]
    }

    /// Longest accepted duration, 3,162,240,000 s (100 × 366 days): far inside what a `Date` represents.
    private static let maximumDuration: Double = 100 * 366 * 86_400

    /// Parses a duration such as `90s`, `10m`, `2h`, `7d`, `1h30m`, `1.5h` or `45` (seconds).
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The duration in seconds, zero or more.
    /// - Throws: `UnitError` when the text is empty, negative, has an unknown unit or is too large.
    static func duration(_ text: String) throws(UnitError) -> TimeInterval {
        let trimmed = String(text.trimmingWhitespace())
        if trimmed.hasPrefix("-") { throw UnitError("must not be negative") }
        if let plain = Double(trimmed), plain.isFinite, trimmed.allSatisfy({ $0.isASCII && !$0.isLetter }) {
            return try checkedDuration(plain)
        }
        var total = 0.0
        var rest = Substring(trimmed)
        guard !rest.isEmpty else { throw UnitError("is empty; expected a number and a unit such as 90s or 10m") }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unit.count)
            // Units are case-sensitive: `M` would read as mega to anyone used to sizes, so it is refused.
            guard let value = Double(number), let scale = durationUnits[String(unit)], !unit.isEmpty else {
                throw UnitError(
                    "is not a duration; expected a number and a lower-case unit (ms, s, m, h, d, w), e.g. 90s or 10m")
            }
            total += value * scale
        }
        return try checkedDuration(total)
    }

    private static func checkedDuration(_ seconds: Double) throws(UnitError) -> TimeInterval {
        guard seconds.isFinite, seconds >= 0 else { throw UnitError("must be a finite, non-negative duration") }
        guard seconds <= maximumDuration else {
            throw UnitError("is too long (at most 3162240000 seconds: 100 years of 366 days)")
        }
        return seconds
    }

    /// Parses a size limit such as `500MB`, `2GiB`, `1.5G`, `4096` (bytes) or `none`.
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The limit in bytes, or `nil` for `none` (unlimited). 0 is kept as 0 (keep nothing).
    /// - Throws: `UnitError` when the text is negative, has an unknown unit or overflows `Int`.
    static func size(_ text: String) throws(UnitError) -> Int? {
        let trimmed = String(text.trimmingWhitespace())
        if trimmed.lowercased() == "none" { return nil }
        if trimmed.hasPrefix("-") { throw UnitError("must not be negative") }
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(number.count).trimmingWhitespace().lowercased()
        guard let value = Double(number), value.isFinite, let scale = sizeUnits[unit] else {
            throw UnitError("is not a size; expected e.g. 500MB, 2GiB, 4096 or none")
        }
        let bytes = (value * scale).rounded(.down)
        guard bytes < Double(Int.max) else { throw UnitError("is too large") }
        return Int(bytes)
    }

    /// Parses an entry count: a non-negative integer or `none`.
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The count, or `nil` for `none` (unlimited).
    /// - Throws: `UnitError` when the text is negative or not an integer.
    static func count(_ text: String) throws(UnitError) -> Int? {
        let trimmed = String(text.trimmingWhitespace())
        if trimmed.lowercased() == "none" { return nil }
        guard let value = Int(trimmed) else { throw UnitError("is not a whole number or none") }
        guard value >= 0 else { throw UnitError("must not be negative") }
        return value
    }
}

/// Why a duration, size or count was rejected, phrased to follow the option's name.
struct UnitError: Error {
    /// For example `must not be negative`.
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace: what `trimmingCharacters(in: .whitespaces)` (or, with
    /// `newlines`, `.whitespacesAndNewlines`) removed. `CharacterSet` is Foundation proper, not
    /// FoundationEssentials, so the two sets are spelled out: Unicode's space separators (`Zs`) and tab, and
    /// with `newlines` also U+000A–U+000D, U+0085, U+2028 and U+2029.
    func trimmingWhitespace(newlines: Bool = false) -> SubSequence {
        func isBlank(_ character: Character) -> Bool {
            character.unicodeScalars.allSatisfy { scalar in
                switch scalar.value {
                case 0x09: return true
                case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return newlines
                default: return scalar.properties.generalCategory == .spaceSeparator
                }
            }
        }
        guard let first = firstIndex(where: { !isBlank($0) }) else { return self[endIndex...] }
        let last = lastIndex(where: { !isBlank($0) }) ?? first
        return self[first...last]
    }
}
