// Must be flagged: a typealias to a listed type, then used through the alias.
import Synchronization

typealias Counter = Atomic

func makeCounter() -> Int {
    let counter = Counter(0)  // FLAG
    return counter.load(ordering: .relaxed)
}
