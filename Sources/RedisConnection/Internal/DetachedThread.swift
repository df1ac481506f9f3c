import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts a named thread of its own for a long-running loop (a connection's I/O thread, the Redis tier's
/// tracking listener).
///
/// Foundation's `Thread` is in Foundation proper, not FoundationEssentials: on Linux it would load
/// libFoundation and ICU into every process that links the Redis tier, `strata get` included, although most
/// never connect. There the thread is a detached pthread; elsewhere it stays a `Thread`.
package enum DetachedThread {
    /// Runs `body` on a new detached thread, named `name` where Foundation names it (the pthread stays unnamed:
    /// glibc's `pthread_setname_np` is not visible through Swift's Glibc module, and nothing reads the name).
    ///
    /// - Returns: `false` when the system could not create the thread; `body` then runs on a thread of
    ///   Dispatch's global pool instead, which it keeps for as long as it runs.
    @discardableResult
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        #if canImport(FoundationEssentials)
        let context = Unmanaged.passRetained(Job(body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let job = Unmanaged<Job>.fromOpaque(raw).takeRetainedValue()
                job.body()
                return nil
            }, context)
        if status != 0 {
            Unmanaged<Job>.fromOpaque(context).release()
            // No thread of its own (a process at its thread limit): the loop still runs, on a worker thread
            // of Dispatch's pool that it keeps for its life, rather than leave its callers waiting for a
            // thread that never comes.
            DispatchQueue.global(qos: .utility).async(execute: body)
            return false
        }
        return true
        #else
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
        return true
        #endif
    }

    #if canImport(FoundationEssentials)
    /// What the new thread runs; handed over retained through pthread's one pointer argument.
    private final class Job {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
    #endif
}
