import CacheCore
import Dispatch
import RedisCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Redis tier as one `strata` run uses it: forwards to the `RedisCache` until the first failure, then
/// fails at once for the rest of the run, after one warning line.
///
/// A run is a few calls long. Without this, each call after an outage would wait for its own connect
/// deadline (the tier's breaker opens only after several failures), and each failure would print a
/// warning. A value over the tier's maximum size (`entryTooLarge`) is the size rule, not a failure: it
/// disables nothing and prints nothing; MultiCache keeps such a value locally (see
/// ``SharedTier/storesEntry(_:)``).
///
/// The calls after the first failure fail with its code (`unavailable` when it was not a `CacheError`): a
/// refusal for good, such as a namespace of another master key, stays one for MultiCache, which keeps only an
/// outage's writes as pending.
///
/// Thread safety: the flag that ends the tier's use is read and set only on a serial queue (the library's
/// lock type is not public, `Synchronization.Atomic` needs macOS 15, and ThreadSanitizer does not see
/// `Synchronization.Mutex`); the warning is printed by whichever call sets it, once.
///
/// `@unchecked Sendable` is sound: the one `var`, `failure`, is read and written only inside `flag.sync`
/// (`hasFailed`, `forward(_:)`, `disable(_:)`), a serial queue; `base` (a `Sendable` `RedisCache`) and `flag` are `let`s.
final class RedisSessionTier: TagRemovingCache, @unchecked Sendable {
    typealias Key = String
    typealias Value = Data

    let base: RedisCache<String, Data>
    private let flag = DispatchQueue(label: "strata.redis-session")
    /// The code of the failure that ended the tier's use; `nil` while it is in use.
    private var failure: CacheError.Code?

    init(_ base: RedisCache<String, Data>) {
        self.base = base
    }

    var clock: any CacheClock { base.clock }

    /// Whether a failure has ended the tier's use for this run.
    var hasFailed: Bool { flag.sync { failure != nil } }

    /// Ends the tier's use with the code of `error`; `true` for the call that ended it.
    private func disable(_ error: any Error) -> Bool {
        flag.sync {
            guard failure == nil else { return false }
            failure = (error as? CacheError)?.code ?? .unavailable
            return true
        }
    }

    func entry(forKey key: String) async throws -> CacheEntry<Data>? {
        try await forward { try await $0.entry(forKey: key) }
    }

    func value(forKey key: String) async throws -> Data? {
        try await entry(forKey: key)?.value
    }

    func setEntry(_ entry: CacheEntry<Data>, forKey key: String) async throws {
        try await forward { try await $0.setEntry(entry, forKey: key) }
    }

    func setValue(_ value: Data, forKey key: String, expiry: Expiry?) async throws {
        let expiresAt = (expiry ?? .never).expirationDate(from: clock.now)
        try await setEntry(CacheEntry(value: value, expiresAt: expiresAt), forKey: key)
    }

    func removeEntry(forKey key: String) async throws {
        try await forward { try await $0.removeEntry(forKey: key) }
    }

    func removeAll() async throws {
        try await forward { try await $0.removeAll() }
    }

    func removeAll(taggedWith tag: String) async throws {
        try await forward { try await $0.removeAll(taggedWith: tag) }
    }

    /// The value for `key`, loaded by `load` once across every process sharing the namespace (the tier's
    /// lease; Docs/Loading.md, "Across processes"), and stored in Redis through the load's fence. A failure of
    /// the tier disables it as any other call's does; `load`'s own error is rethrown as it is and disables
    /// nothing.
    func value(
        forKey key: String, expiry: Expiry, tags: Set<String>, orLoad load: @escaping @Sendable () async throws -> Data
    ) async throws -> Data {
        do {
            return try await forward { base in
                try await base.value(forKey: key, expiry: expiry, tags: tags) {
                    do {
                        return try await load()
                    } catch {
                        throw LoaderFailure(error: error)
                    }
                }
            }
        } catch let failure as LoaderFailure {
            throw failure.error
        }
    }

    /// Runs `body` on the tier unless it failed earlier in the run; a failure other than the size rule, a
    /// cancellation or a loader's own error disables the tier and prints the warning.
    private func forward<Result>(
        _ body: (RedisCache<String, Data>) async throws -> Result
    ) async throws -> Result {
        if let code = flag.sync(execute: { failure }) {
            throw CacheError(code, "Redis is not used for the rest of this run")
        }
        do {
            return try await body(base)
        } catch let error as CacheError where error.code == .entryTooLarge {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch let failure as LoaderFailure {
            throw failure
        } catch {
            if disable(error) {
                let host = "\(base.configuration.host):\(base.configuration.port)"
                var problem = SharedTier.Problem(error, host: host, namespace: base.configuration.namespace)
                // An open breaker is the effect; the connection's missed deadlines (its keep-alives count too)
                // are the cause a user can act on, so the line names them.
                let health = base.health
                if case .unavailable(let reason) = problem, health.isBreakerOpen, health.deadlineMisses > 0 {
                    let misses =
                        health.deadlineMisses == 1 ? "a missed deadline" : "\(health.deadlineMisses) missed deadlines"
                    problem = .unavailable(reason + "; it opened after \(misses)")
                }
                StandardStreams.printError(problem.warning(host: host))
            }
            throw error
        }
    }
}

/// An error a loader threw, told apart from the tier's own failures (which disable the tier for the run).
private struct LoaderFailure: Error {
    var error: any Error
}
