import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A rule of the ``CacheContract`` that a cache broke, with what was expected and what happened.
///
/// Thrown by ``CacheContract/verify(_:makeCache:)``. Its ``description`` is written to be read in a
/// test log:
///
/// ```swift
/// do {
///     try await CacheContract.verify(.expiryBoundary) { clock in MyCache(clock: clock) }
/// } catch let violation as ContractViolation {
///     print(violation)
///     // expiryBoundary: exactly at the expiry instant: "ttl" should miss (expected: nil (a miss);
///     // actual: 11 bytes "ten seconds")
/// }
/// ```
///
/// Thread-safe: a value type with `Sendable` stored properties.
public struct ContractViolation: Error, Sendable, CustomStringConvertible {
    /// The rule that was broken.
    public var check: CacheContract.Check
    /// What went wrong, in a sentence.
    public var message: String
    /// A description of the result the rule requires, when there is one to compare.
    public var expected: String?
    /// A description of the result the cache produced, when there is one to compare.
    public var actual: String?
    /// The error the cache (or the factory) threw, when the violation is an unexpected error.
    public var underlyingError: (any Error)?

    /// Creates a violation record.
    ///
    /// - Parameters:
    ///   - check: The rule that was broken.
    ///   - message: What went wrong.
    ///   - expected: The required result, described for a reader.
    ///   - actual: The result produced, described for a reader.
    ///   - underlyingError: The error that was thrown, if the violation is an unexpected error.
    public init(
        check: CacheContract.Check,
        message: String,
        expected: String? = nil,
        actual: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.check = check
        self.message = message
        self.expected = expected
        self.actual = actual
        self.underlyingError = underlyingError
    }

    /// `check: message (expected: …; actual: …)`.
    public var description: String {
        var details: [String] = []
        if let expected { details.append("expected: \(expected)") }
        if let actual { details.append("actual: \(actual)") }
        if let underlyingError { details.append("error: \(underlyingError)") }
        let suffix = details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")"
        return "\(check): \(message)\(suffix)"
    }
}

/// Every rule of the ``CacheContract`` that a cache broke in one ``CacheContract/verifyAll(_:makeCache:)``
/// run.
///
/// Thread-safe: a value type with `Sendable` stored properties.
public struct ContractViolations: Error, Sendable, CustomStringConvertible {
    /// The broken rules, in the order they were checked; never empty when thrown.
    public var violations: [ContractViolation]

    /// Creates a record of several violations.
    ///
    /// - Parameter violations: The violations, in the order they were found.
    public init(_ violations: [ContractViolation]) {
        self.violations = violations
    }

    /// One line per violation.
    public var description: String {
        "\(violations.count) contract violation(s):\n" + violations.map { "- \($0)" }.joined(separator: "\n")
    }
}
