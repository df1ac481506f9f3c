import CacheCore

/// Results collected from completion handlers on other threads.
final class ResultBox<T: Sendable>: Sendable {
    private let results = Locked<[Result<T, any Error>]>([])

    func append(_ result: Result<T, any Error>) { results.withLock { $0.append(result) } }

    var all: [Result<T, any Error>] { results.withLock { $0 } }
}
