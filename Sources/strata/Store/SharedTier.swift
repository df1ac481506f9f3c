import CacheCore
import CacheCrypto
import DiskCache
import Dispatch
import MultiCache
import RedisCache

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

/// The tiers a command reads and writes through: the local store alone, or with `--redis URL` (or
/// `STRATA_REDIS_URL`) a `MultiCache` of the store and the Redis tier under it, whose last tier is its
/// authority (`MultiCache.Authority`). Every machine with the same server, namespace and master key shares
/// `set`/`get` values and `exec` results.
///
/// While Redis answers it decides what `get` and `exec` see: a hit is served and written into the store
/// only when the store's copy is missing or differs; a miss is a miss and drops the store's copy, so a
/// value another machine replaced, removed or cleared is never served from an old local copy. The one
/// exception is a local value over the tier's maximum (1 MiB), which could only ever live locally: it is
/// served. A Redis that cannot be reached, answers too late or refuses a write costs one warning line on
/// stderr, once per run (``RedisSessionTier``); the rest of the run uses the store alone. Writes, removals
/// and tag removals go to both tiers.
///
/// The master key is the store's own: `STRATA_MASTER_KEY`, the `--store` folder's key file, or the default
/// store's key file.
///
/// Thread safety: the tool calls it from its main thread; the `MultiCache`'s `async` calls run on the
/// cooperative pool while the main thread waits (``waitFor(_:)``; the main thread is not a pool thread).
struct SharedTier {
    /// The local store, the first tier.
    let store: DiskCache<String, Data>
    /// The Redis tier for this run; `nil` without `--redis`, or when it could not be created.
    let redis: RedisSessionTier?
    /// The store over Redis; `nil` without a Redis tier (the store is then called directly).
    private let tiers: MultiCache<String, Data>?
    /// Where writes Redis missed wait for a run that reaches it; `nil` without a Redis tier.
    let journal: StorePendingJournal?

    /// Parses the URL and resolves the master key; `nil` when no URL is given.
    ///
    /// - Throws: `CLIFailure.badSetting` (exit 2, one line) for a malformed URL.
    /// - Parameters:
    ///   - url: `--redis` or `STRATA_REDIS_URL`, or `nil`.
    ///   - settings: The TLS files and connect deadline (checked against the URL, files opened).
    ///   - location: The store, whose master key the tier uses.
    static func configuration(
        url: String?, settings: RedisConnectionSettings, location: StoreLocation
    ) throws(CLIFailure) -> RedisCacheConfiguration? {
        var parsed: RedisCacheConfiguration?
        if let url, !url.isEmpty {
            do {
                parsed = try RedisCacheConfiguration(url: url)
            } catch {
                throw .badSetting("bad Redis URL: \(error.message)")
            }
        }
        try settings.apply(to: &parsed)
        guard var configuration = parsed else { return nil }
        try rejectDatabaseNumber(configuration.namespace)
        switch location.configuration.masterKeySource {
        case .defaultMasterKeyFile:
            // The default store's key file, not a separate `redis.<namespace>.key`: one key per store.
            guard let file = try? MasterKeySource.defaultMasterKeyFileURL(forStoreNamed: location.configuration.name)
            else {
                throw .badSetting("cannot locate the default key file for the Redis tier")
            }
            configuration.masterKeySource = .masterKeyFile(file)
        case let source:
            configuration.masterKeySource = source
        }
        configuration.clock = location.configuration.clock
        return configuration
    }

    /// Refuses a namespace of digits only (`redis://host:6379/0`): in other clients' URLs that path is a
    /// database number, but here it names a namespace in the server's database 0, so a user who meant
    /// "database 0" would silently share namespace "0" with everyone who meant database 0 too.
    ///
    /// - Throws: `CLIFailure.badSetting` saying what the path means and how to name a namespace.
    static func rejectDatabaseNumber(_ namespace: String) throws(CLIFailure) {
        guard !namespace.isEmpty, namespace.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return }
        throw .badSetting(
            "bad Redis URL: the path /\(namespace) looks like a database number, but strata reads the path as a "
                + "namespace (every namespace lives in database 0); name the namespace with a letter in it, such as "
                + "/ns\(namespace), or leave the path out for the namespace \"default\"")
    }

    /// Opens the Redis tier over `store`; a tier that cannot be created is reported once and left out,
    /// unless its TLS files are what failed: a CA file or client certificate OpenSSL cannot use is the
    /// user's setting to fix, and going on without Redis would hide it.
    ///
    /// - Throws: `CLIFailure.store` (3) with OpenSSL's reason when the TLS files cannot be used.
    init(store: DiskCache<String, Data>, configuration: RedisCacheConfiguration?) throws(CLIFailure) {
        self.store = store
        var redis: RedisSessionTier?
        if let configuration {
            do {
                redis = RedisSessionTier(try RedisCache<String, Data>(configuration: configuration))
            } catch {
                if let cacheError = error as? CacheError, (cacheError.cause as? RedisError)?.code == .tlsFailed {
                    throw .store(oneLine(cacheError.message))
                }
                Self.warn(
                    about: error, host: "\(configuration.host):\(configuration.port)",
                    namespace: configuration.namespace)
            }
        }
        self.redis = redis
        guard let redis else {
            tiers = nil
            journal = nil
            return
        }
        let maximumValueSize = redis.base.configuration.maximumValueSize
        let journal = StorePendingJournal(store: store, masterKeySource: redis.base.configuration.masterKeySource)
        // A replay's claim must outlast any one write to Redis within its deadlines (`--redis-timeout`).
        let deadlines = redis.base.configuration
        let slowest = max(deadlines.connectTimeout, deadlines.readTimeout, deadlines.writeTimeout)
        let claimDuration = max(.seconds(10), slowest * 4)
        self.journal = journal
        do {
            tiers = try MultiCache(
                tiers: [.init(store, name: "store"), .init(redis, name: "redis")],
                observer: Self.warnAboutLostWrites,
                authority: .init(
                    storesKey: { $0.canonicalBytes.count <= RedisCache<String, Data>.maximumKeySize },
                    storesEntry: { $0.value.count <= maximumValueSize },
                    replay: .init(journal: journal, claimDuration: claimDuration)))
        } catch {
            throw .store("cannot compose the store with Redis: \(oneLine("\(error)"))")
        }
    }

    /// Warns, on stderr at once, when writes Redis missed could not be kept for replay (the journal beside the
    /// store failed): nothing else would tell that Redis will not get them.
    private static let warnAboutLostWrites: CacheObserver = { event in
        guard event.kind == .pendingWriteLost else { return }
        let reason = event.error.map { ": " + oneLine(CLIFailure.reason(of: $0)) } ?? ""
        StandardStreams.printError("strata: warning: \(oneLine(event.message)); Redis will not get it\(reason)")
    }

    /// The value `get` and `exec` serve for `key` (see the type's rules).
    ///
    /// - Throws: What reading the store throws, when the store fails and Redis does not answer.
    func value(forKey key: String) throws -> Data? {
        guard let tiers else { return try store.value(forKey: key) }
        return try storeOutcome(waitFor { try await tiers.value(forKey: key) }) ?? nil
    }

    /// Whether loads can go through Redis's lease, so that one machine of every one sharing the namespace
    /// loads a key the others miss at once (``load(_:expiry:tags:orLoad:)``): a Redis tier that has not
    /// failed in this run.
    var sharesLoads: Bool { redis.map { !$0.hasFailed } ?? false }

    /// The value for `key`, loaded by `load` once across every machine sharing the Redis tier: the tier's
    /// load, whose lease lets one process load while the others wait for its value (Docs/Loading.md, "Across
    /// processes"). The value is kept in Redis through the load's fence; the store's copy is the caller's to
    /// make (``keepLocalCopy(_:forKey:)`` for another machine's value, ``setEntry(_:forKey:)`` for its own).
    ///
    /// - Returns: The value another machine loaded, or `load`'s; `nil` when Redis could not be used (warned
    ///   about once): the caller then loads with the store alone.
    /// - Throws: `load`'s error.
    func load(
        _ key: String, expiry: Expiry, tags: Set<String>, orLoad load: @escaping @Sendable () async throws -> Data
    ) throws -> Data? {
        guard let redis, !redis.hasFailed else { return nil }
        let outcome = waitFor { try await redis.value(forKey: key, expiry: expiry, tags: tags, orLoad: load) }
        guard case .success(let value) = outcome else {
            // The tier's own failure disabled it (and warned); anything else is the loader's.
            if redis.hasFailed { return nil }
            return try outcome.get()
        }
        return value
    }

    /// What Redis holds for `key` now: `.some(value)` (`.some(nil)` for nothing), or `nil` when Redis cannot
    /// be read (not configured, failed earlier in this run, or failing now: warned about once).
    func redisAnswers(forKey key: String) -> Data?? {
        guard let redis, !redis.hasFailed else { return nil }
        guard case .success(let value) = waitFor({ try await redis.value(forKey: key) }) else { return nil }
        return .some(value)
    }

    /// Keeps a copy of another machine's `entry` in the store, as a Redis hit does; a failure to write it loses
    /// nothing (Redis holds the entry), so it is not reported.
    func keepLocalCopy(_ entry: CacheEntry<Data>, forKey key: String) {
        try? store.setEntry(entry, forKey: key)
    }

    /// Stores `entry` in the store and in Redis. A failure of Redis alone was warned about and is not an
    /// error: the store holds the entry. When the store refuses or fails the write, Redis drops its copy
    /// too, so the key has no value anywhere, as the store's error says.
    ///
    /// - Throws: The store's own error.
    func setEntry(_ entry: CacheEntry<Data>, forKey key: String) throws {
        guard let tiers else { return try store.setEntry(entry, forKey: key) }
        do {
            try storeOutcome(waitFor { try await tiers.setEntry(entry, forKey: key) })
        } catch {
            _ = waitFor { try await tiers.removeEntry(forKey: key) }
            throw error
        }
    }

    /// Removes `key` from the store and from Redis.
    ///
    /// - Throws: The store's error; a failure of Redis alone was warned about.
    func removeEntry(forKey key: String) throws {
        guard let tiers else { return try store.removeEntry(forKey: key) }
        try storeOutcome(waitFor { try await tiers.removeEntry(forKey: key) })
    }

    /// Makes every entry carrying `tag` a miss in the store and, for every machine sharing the namespace,
    /// in Redis (one counter write each).
    ///
    /// - Throws: The store's error; a failure of Redis alone was warned about.
    func removeAll(taggedWith tag: String) throws {
        guard let tiers else { return try store.removeAll(taggedWith: tag) }
        try storeOutcome(waitFor { try await tiers.removeAll(taggedWith: tag) })
    }

    /// Clears the namespace in Redis for every machine sharing it (one `INCR`), through the tiers so that
    /// a clear Redis misses is kept as pending; `clear` wipes the store itself first, with its progress
    /// line, so the store's part here finds it empty. A failure of Redis alone was warned about.
    ///
    /// - Throws: The store's error.
    func removeAllInRedis() throws {
        guard let tiers else { return }
        try storeOutcome(waitFor { try await tiers.removeAll() })
    }

    /// The outcome of a `MultiCache` call as the tool sees it: a failure of the Redis tier alone is no error
    /// (``RedisSessionTier`` warned, or the value is over its size limit and lives locally); the store's
    /// failure is thrown as the store's own error, so its message is the one the tool has always printed.
    private func storeOutcome<Success>(_ outcome: Result<Success, any Error>) throws -> Success? {
        switch outcome {
        case .success(let value):
            return value
        case .failure(let error as CacheError) where error.code == .tierFailure:
            if let storeFailure = error.tierFailures.first(where: { $0.index == 0 }) { throw storeFailure.error }
            return nil
        case .failure(let error):
            throw error
        }
    }

    /// What `strata stats` shows of the tier.
    struct Report {
        /// `HOST:PORT`.
        var address: String
        var namespace: String
        /// Why the probe failed; `nil` when the server answered and the master key matched.
        var problem: Problem?
        /// The tier's connection and integrity counters after the probe (this process's: the tier's
        /// counters start at zero with each `strata` run).
        var health: RedisCacheHealth
        /// Writes Redis missed that wait for a run that reaches it (``StorePendingJournal``); `nil` when
        /// the journal cannot be read.
        var pendingWrites: Int?
    }

    /// Probes the tier with one round trip that also checks the master key against the namespace's
    /// key-check record (`tagVersions(for: [])` reads no tag), then takes its health. Warns about nothing:
    /// the report carries the problem.
    ///
    /// - Returns: The report; `nil` without a tier (none given, or it could not be created, which was
    ///   warned about).
    func report() -> Report? {
        guard let cache = redis?.base else { return nil }
        let address = "\(cache.configuration.host):\(cache.configuration.port)"
        var problem: Problem?
        if case .failure(let error) = waitFor({ _ = try await cache.tagVersions(for: []) }) {
            problem = Problem(error, host: address, namespace: cache.configuration.namespace)
        }
        return Report(
            address: address, namespace: cache.configuration.namespace, problem: problem, health: cache.health,
            pendingWrites: journal?.pendingCount())
    }

    /// Runs `body` on a task and waits for it on the calling thread, the tool's main thread (never a
    /// thread of the cooperative pool, which the task needs).
    private func waitFor<Success: Sendable>(
        _ body: @escaping @Sendable () async throws -> Success
    ) -> Result<Success, any Error> {
        let outcome = Outcome<Success>()
        let done = DispatchSemaphore(value: 0)
        Task {
            outcome.result = await Result { try await body() }
            done.signal()
        }
        done.wait()
        return outcome.result ?? .failure(CancellationError())
    }

    /// The one warning line for a tier that failed: a master key other than the namespace's and a server
    /// that does not speak RESP get their own words, since waiting would fix neither; anything else reads
    /// as the passing outage it is.
    static func warn(about error: any Error, host: String, namespace: String) {
        StandardStreams.printError(Problem(error, host: host, namespace: namespace).warning(host: host))
    }

    /// Why the tier could not be used, in the words the warning and `stats` show.
    enum Problem {
        /// The key-check record of the namespace (named) belongs to another master key.
        case wrongMasterKey(namespace: String)
        /// The server answered bytes that are not RESP.
        case notRedis(String)
        /// Anything else: unreachable, too slow, refused.
        case unavailable(String)

        init(_ error: any Error, host: String, namespace: String) {
            let cacheError = error as? CacheError
            let redisError = (error as? RedisError) ?? (cacheError?.cause as? RedisError)
            // The transport's own sentence, without the address the line already names. It may quote the
            // server's own words, so control characters are escaped and its length is capped.
            let reason = EntryFormatting.outsideText(
                oneLine(redisError?.message ?? cacheError?.message ?? "\(error)")
                    .replacing(" to \(host)", with: "")
                    .replacing("Redis at \(host): ", with: ""))
            if cacheError?.code == .wrongMasterKey {
                self = .wrongMasterKey(namespace: namespace)
            } else if redisError?.code == .protocolViolation {
                self = .notRedis(reason)
            } else {
                self = .unavailable(reason)
            }
        }

        /// The `strata: warning: ...` line.
        func warning(host: String) -> String {
            switch self {
            case .wrongMasterKey:
                return "strata: warning: Redis at \(host) not used: \(summary(host: host))"
            case .notRedis:
                return "strata: warning: \(summary(host: host)); it is not used, the local store serves alone"
            case .unavailable(let reason):
                return "strata: warning: Redis at \(host) not used for the rest of this run: \(reason)"
            }
        }

        /// The problem in one clause, for the warning and for `stats`.
        func summary(host: String) -> String {
            switch self {
            case .wrongMasterKey(let namespace):
                return
                    "its namespace \"\(namespace)\" was written with a different master key than this store's; every machine "
                    + "sharing it needs the same key (STRATA_MASTER_KEY or the same key file); nothing there was "
                    + "read or changed"
            case .notRedis(let reason):
                return "the server at \(host) does not speak Redis (its reply is not RESP: \(reason))"
            case .unavailable(let reason):
                return "not answering: \(reason)"
            }
        }
    }
}

extension Result where Failure == any Error {
    /// Captures the outcome of an async throwing body.
    fileprivate init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

/// The result of a task, handed to the thread that waits for it.
///
/// `@unchecked Sendable` is sound: ``SharedTier/waitFor(_:)`` writes `result` once, on the task, before it
/// signals the semaphore, and reads it only after `wait()` returns; the semaphore orders the write before the
/// read, nothing else touches it, and what it carries across (`Success`, `any Error`) is `Sendable`.
private final class Outcome<Success: Sendable>: @unchecked Sendable {
    var result: Result<Success, any Error>?
}
