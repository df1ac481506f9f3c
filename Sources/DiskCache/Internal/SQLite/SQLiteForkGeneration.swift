#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How many times this process's line of ancestors has forked into a child since the SQLite layer was
/// first used: a connection remembers the value at open, and a different value later means the connection
/// was inherited across `fork()` (SQLite forbids using or closing it there).
///
/// Why not compare `getpid()`: it is a system call on every operation (measured at 1.46 µs here, a third of
/// a whole SQLite get), whereas this is one load of a global.
enum SQLiteForkGeneration {
    /// The current generation; registers the fork handler on first use.
    ///
    /// Thread safety: safe from any thread (see ``generation``).
    static var current: UInt64 {
        _ = registration
        return generation
    }

    // Registered once (a `static let` initializer runs exactly once, thread-safely). Only the child handler
    // matters: it runs in the new child only.
    private static let registration: Void = {
        _ = pthread_atfork(nil, nil, { generation &+= 1 })
    }()

    // `nonisolated(unsafe)` is sound: the only write is the atfork child handler, which runs in a just-forked
    // child while it has exactly one thread, before any other thread of the child exists; every later read
    // in the child happens after it in that thread or in threads it creates (thread creation orders them).
    // The parent never writes it, so its readers never race.
    nonisolated(unsafe) private static var generation: UInt64 = 0
}
