/// How many tasks the concurrency tests run at once.
let concurrentTasks = 8

/// A value that names the key it was written for and where it came from (a value handed out by
/// `History`), so a read can prove it got a value of the right key and check whether that value may still
/// be visible.
struct Tagged: Sendable, Hashable {
    var key: Int
    var id: Int
    var bytes: Int
}
