import Testing

/// Signals when the last reference to it goes away: captured by a completion handler, it tells the test
/// that the cache has let go of the handler, so no further call can ever arrive.
final class ReleaseSignal: Sendable {
    private let onRelease: @Sendable () -> Void

    init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }

    deinit { onRelease() }
}

/// Starts an operation with a completion handler and returns every result it delivered, once the
/// operation has released the handler. Fails the test unless the handler ran exactly once. No sleeping:
/// the wait ends when the handler (and the signal it captures) is deallocated.
func deliveredResults<T: Sendable>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
) async -> [Result<T, any Error>] {
    let results = ResultBox<T>()
    await confirmation("completion called", expectedCount: 1, sourceLocation: sourceLocation) { called in
        await withCheckedContinuation { (released: CheckedContinuation<Void, Never>) in
            let signal = ReleaseSignal { released.resume() }
            start { result in
                withExtendedLifetime(signal) {
                    results.append(result)
                    called()
                }
            }
        }
    }
    return results.all
}

/// The single result delivered, or `nil` (after a test failure) when there was not exactly one.
func deliveredResult<T: Sendable>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
) async -> Result<T, any Error>? {
    let results = await deliveredResults(sourceLocation: sourceLocation, start)
    return results.count == 1 ? results[0] : nil
}
