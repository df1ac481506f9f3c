import Foundation
import Testing

@testable import CacheCore

/// The library's own reading of the environment agrees with Foundation's, name for name and value for value.
@Suite struct ProcessEnvironmentTests {
    @Test func theVariablesAreFoundationsVariables() {
        // Given the environment as Foundation reads it (the test runner's: PATH, HOME and the rest)
        let foundation = ProcessInfo.processInfo.environment

        // When the library reads it from `environ`
        let variables = ProcessEnvironment.variables

        // Then both hold the same names with the same values (a split at the wrong "=", a dropped first or
        // last entry or a truncated value would differ)
        #expect(!variables.isEmpty)
        #expect(variables == foundation)
    }
}
