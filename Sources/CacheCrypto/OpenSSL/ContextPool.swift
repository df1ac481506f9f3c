#if !canImport(CryptoKit)
import CacheCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Library contexts that one thread at a time may borrow: taken out under the lock, used without it,
/// put back under it. A context is never in two threads' hands at once, which is what OpenSSL requires.
/// At most `capacity` idle contexts are kept; the rest are freed on return.
///
/// `@unchecked Sendable` is sound: every stored property is a `let`; the idle contexts (raw pointers, so
/// not `Sendable`) are reached only under `idle`'s lock, and a context taken out is used by the one thread
/// that took it until it puts it back or frees it, so no context is ever in two threads' hands.
final class ContextPool: @unchecked Sendable {
    private let idle = Locked<[OpaquePointer]>([])
    private let capacity: Int
    private let make: @Sendable () throws -> OpaquePointer
    private let free: @Sendable (OpaquePointer) -> Void

    init(
        capacity: Int, make: @escaping @Sendable () throws -> OpaquePointer,
        free: @escaping @Sendable (OpaquePointer) -> Void
    ) {
        self.capacity = capacity
        self.make = make
        self.free = free
    }

    /// A pool of contexts made from an algorithm the library fetches: `fetch` runs for each new context
    /// and its result is released once the context holds it (a context keeps its own reference), the
    /// context comes from `newContext`, then `configure` sets it up (a key, parameters); a context whose
    /// set-up fails is freed, never pooled.
    ///
    /// - Parameter names: The fetch and context-creation calls, for the error when either returns NULL.
    convenience init(
        capacity: Int, names: (fetch: String, newContext: String),
        fetch: @escaping @Sendable () -> OpaquePointer?,
        releaseAlgorithm: @escaping @Sendable (OpaquePointer) -> Void,
        newContext: @escaping @Sendable (_ algorithm: OpaquePointer) -> OpaquePointer?,
        configure: @escaping @Sendable (_ context: OpaquePointer, _ algorithm: OpaquePointer) throws -> Void,
        free: @escaping @Sendable (OpaquePointer) -> Void
    ) {
        self.init(
            capacity: capacity,
            make: {
                guard let algorithm = fetch() else { throw OpenSSLBackend.libraryFailure(names.fetch) }
                defer { releaseAlgorithm(algorithm) }
                guard let context = newContext(algorithm) else {
                    throw OpenSSLBackend.libraryFailure(names.newContext)
                }
                do {
                    try configure(context, algorithm)
                } catch {
                    free(context)
                    throw error
                }
                return context
            },
            free: free)
    }

    /// Runs `body` with a context no other thread is using.
    ///
    /// A context whose use threw is freed rather than returned, so a half-finished operation never
    /// leaks state into the next one.
    func withContext<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let context = try idle.withLock { $0.popLast() } ?? make()
        let result: R
        do {
            result = try body(context)
        } catch {
            free(context)
            throw error
        }
        let surplus: OpaquePointer? = idle.withLock { contexts in
            guard contexts.count < capacity else { return context }
            contexts.append(context)
            return nil
        }
        if let surplus { free(surplus) }
        return result
    }

    deinit {
        for context in idle.withLock({ $0 }) { free(context) }
    }
}
#endif  // !canImport(CryptoKit): CryptoKit keeps no library contexts
