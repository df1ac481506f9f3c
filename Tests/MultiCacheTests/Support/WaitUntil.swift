/// Yields until `condition` holds: for the few states no event reports (callers that joined another
/// caller's load, a removal parked inside the coordinator), where a test cannot be handed a `Gate` to wait
/// on. Anything a test's own loader or tier does is waited for with a `Gate` it opens instead. Throws
/// `CancellationError` when the test's time limit cancels it, so a broken feature fails the test instead of
/// hanging it.
func waitUntil(_ condition: () -> Bool) async throws {
    while !condition() {
        try Task.checkCancellation()
        await Task.yield()
    }
}
