#if !canImport(CryptoKit)
import CacheCore
import Foundation

/// Library contexts that one thread at a time may borrow: taken out under the lock, used without it,
/// put back under it. A context is never in two threads' hands at once, which is what OpenSSL requires.
/// At most `capacity` idle contexts are kept; the rest are freed on return.
final class ContextPool: Sendable {
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
