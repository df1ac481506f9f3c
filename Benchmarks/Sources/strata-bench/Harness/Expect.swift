/// A scenario's sanity check failed: the thing measured did not do the work (for example a read missed).
struct ExpectationFailure: Error, CustomStringConvertible {
    let description: String
}

/// Throws when `condition` is false, so that a benchmark never reports the speed of a broken operation.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ExpectationFailure(description: message()) }
}
