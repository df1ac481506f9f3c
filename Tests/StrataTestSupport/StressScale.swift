import Foundation

/// How hard stress and concurrency tests push, from one environment variable, `STRATA_STRESS_SCALE`.
///
/// Every stress test writes its everyday size and asks ``scaled(_:)`` for the size to run: `1` (the
/// default) runs it as written, `0.2` is what CI uses under ThreadSanitizer (which slows every lock
/// tenfold or more), and `12.5` is the full run of `Tests/Reliability/run-full.sh`. A value that is not a
/// positive number is reported once on standard error and ignored.
public enum StressScale {
    /// The environment variable read.
    public static let variable = "STRATA_STRESS_SCALE"

    /// The factor in force: the variable's value, or 1.
    public static let factor: Double = {
        guard let text = ProcessInfo.processInfo.environment[variable] else { return 1 }
        guard let value = Double(text), value.isFinite, value > 0 else {
            FileHandle.standardError.write(Data("\(variable)=\(text) is not a positive number; using 1\n".utf8))
            return 1
        }
        return value
    }()

    /// `count` times the factor, rounded, and at least 1.
    public static func scaled(_ count: Int) -> Int {
        max(1, Int((Double(count) * factor).rounded()))
    }
}
