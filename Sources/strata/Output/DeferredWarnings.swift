import CacheCore
import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Warnings reported by the store while a command runs, held back until the command's outcome is known.
///
/// A failing command prints exactly one line, its error; the warnings that led to it (say the
/// `readFailed` event of the very file `get` then fails on) would only repeat it. So the store's
/// observer adds its events here, and the runner prints them when the command succeeds and drops them
/// when it fails. `verify` takes the `readFailed` events itself to count and name unreadable files.
///
/// Thread safety: the observer may run on any thread; the list is only touched on a serial queue (the
/// library's lock type is not public, and ThreadSanitizer does not see `Synchronization.Mutex`'s locking;
/// warnings are rare, so a queue costs nothing that matters).
enum DeferredWarnings {
    private static let queue = DispatchQueue(label: "strata.deferred-warnings")
    /// Guarded by `queue`: read and written only inside `queue.sync`.
    nonisolated(unsafe) private static var pending: [CacheEvent] = []

    /// Holds `event` back until ``flush()`` or ``discard()``.
    static func add(_ event: CacheEvent) {
        queue.sync { pending.append(event) }
    }

    /// Removes and returns the events held back so far, oldest first.
    static func take() -> [CacheEvent] {
        queue.sync {
            defer { pending = [] }
            return pending
        }
    }

    /// Whether `event` says the store's database could not be used and was moved to `quarantine/`, so that
    /// the store starts again empty: the library reports it as one corrupt removal naming the database file
    /// itself (an entry's report names its row or its file), and a user who finds every entry gone must be
    /// told why.
    static func isStoreReset(_ event: CacheEvent) -> Bool {
        event.kind == .corruptEntryRemoved && event.path?.hasSuffix("/store.sqlite") == true
    }

    /// Prints each held-back event as one `strata: warning:` line on stderr, and forgets them. A file
    /// that could not be read is named as `cannot read PATH: REASON; left in place` (Docs/CLI.md).
    static func flush() {
        for event in take() {
            if isStoreReset(event) {
                StandardStreams.printError("strata: warning: \(oneLine(event.message))")
            } else if event.kind == .readFailed, let path = event.path {
                let reason = event.error.map { ": " + CLIFailure.reason(of: $0) } ?? ""
                StandardStreams.printError("strata: warning: cannot read \(path)\(reason); left in place")
            } else {
                // The event's sentence, where, and the system's words for why; not the error's own dump.
                let path = event.path.map { " (path: \($0))" } ?? ""
                let reason = event.error.map { ": " + CLIFailure.reason(of: $0) } ?? ""
                StandardStreams.printError("strata: warning: \(event.kind): \(oneLine(event.message))\(path)\(reason)")
            }
        }
    }

    /// Forgets the held-back events: the command failed, and its one error line says what matters.
    static func discard() {
        _ = take()
    }
}
