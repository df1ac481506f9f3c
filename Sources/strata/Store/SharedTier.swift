import CacheCore
import CacheCrypto
import DiskCache
import Dispatch
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

/// The Redis tier `--redis URL` (or `STRATA_REDIS_URL`) beside the local store: writes, removals and
/// `clear` go to both. Every machine with the same server, namespace and master key shares `set`/`get`
/// values and `exec` results.
///
/// While Redis answers it is authoritative for reads (``value(forKey:in:)``): a hit refreshes the local
/// copy, a miss is a miss and drops the local copy, so a value another machine replaced, removed or
/// cleared is never served from an old local copy. The one exception is a local value over the tier's
/// maximum (1 MiB), which could only ever live locally: it is served. A Redis that cannot be reached,
/// answers too late or refuses a write costs one warning line on stderr, once per run; the rest of the run
/// uses the local store alone. Values over the maximum stay local without a warning.
///
/// The master key is the store's own: `STRATA_MASTER_KEY`, the `--store` folder's key file, or the default
/// store's key file.
///
/// Thread safety: the tool calls it from its main thread; the tier's `async` calls run on the cooperative
/// pool while the main thread waits on a semaphore (the main thread is not a pool thread).
struct SharedTier {
    /// No Redis: every call does nothing.
    static let disabled = SharedTier(cache: nil)

    private let cache: RedisCache<String, Data>?
    private let isHealthy = Locked(true)

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
            guard let file = try? MasterKeyLoader.defaultMasterKeyFileURL(storeName: location.configuration.name) else {
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

    private init(cache: RedisCache<String, Data>?) {
        self.cache = cache
    }

    /// Opens the tier; a tier that cannot be created is reported once and left out, unless its TLS files
    /// are what failed: a CA file or client certificate OpenSSL cannot use is the user's setting to fix,
    /// and going on without Redis would hide it.
    ///
    /// - Throws: `CLIFailure.store` (3) with OpenSSL's reason when the TLS files cannot be used.
    init(configuration: RedisCacheConfiguration?) throws(CLIFailure) {
        guard let configuration else {
            cache = nil
            return
        }
        do {
            cache = try RedisCache<String, Data>(configuration: configuration)
        } catch {
            if let cacheError = error as? CacheError, (cacheError.cause as? RedisError)?.code == .tlsFailed {
                throw .store(oneLine(cacheError.message))
            }
            cache = nil
            Self.warn(
                about: error, host: "\(configuration.host):\(configuration.port)", namespace: configuration.namespace)
        }
    }

    /// What Redis answered for one key.
    enum Lookup {
        /// Redis holds the entry.
        case hit(CacheEntry<Data>)
        /// Redis answered: no such entry.
        case miss
        /// No Redis for this run (none given, or it failed and was warned about).
        case unavailable
    }

    /// Asks Redis for `key`.
    func lookUp(_ key: String) -> Lookup {
        switch call({ try await $0.entry(forKey: key) }) {
        case .some(.some(let entry)): .hit(entry)
        case .some(.none): .miss
        case .none: .unavailable
        }
    }

    /// The value `get` and `exec` serve for `key`: Redis's while it answers (a hit is written into `store`
    /// with its remaining lifetime, a miss removes the local copy unless that copy is over the tier's
    /// maximum value size), the store's own otherwise.
    ///
    /// - Throws: What reading `store` throws.
    func value(forKey key: String, in store: DiskCache<String, Data>) throws -> Data? {
        switch lookUp(key) {
        case .unavailable:
            return try store.value(forKey: key)
        case .hit(let entry):
            try? store.setEntry(entry, forKey: key)
            return entry.value
        case .miss:
            guard let local = try store.value(forKey: key) else { return nil }
            if let limit = cache?.configuration.maximumValueSize, local.count > limit { return local }
            // Another machine removed or cleared it (or it expired there): the local copy is out of date.
            try? store.removeEntry(forKey: key)
            return nil
        }
    }

    /// Stores `entry` in Redis; failures are warned about, values too large skipped.
    func setEntry(_ entry: CacheEntry<Data>, forKey key: String) {
        _ = call { try await $0.setEntry(entry, forKey: key) }
    }

    /// Removes `key` from Redis.
    func removeEntry(forKey key: String) {
        _ = call { try await $0.removeEntry(forKey: key) }
    }

    /// Clears the namespace for every machine sharing it (one `INCR`).
    func removeAll() {
        _ = call { try await $0.removeAll() }
    }

    /// Makes every entry carrying `tag` a miss for every machine sharing the namespace (one `INCR`).
    func removeAll(taggedWith tag: String) {
        _ = call { try await $0.removeAll(taggedWith: tag) }
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
    }

    /// Probes the tier with one round trip that also checks the master key against the namespace's
    /// key-check record (`tagVersions(for: [])` reads no tag), then takes its health. Warns about nothing:
    /// the report carries the problem.
    ///
    /// - Returns: The report; `nil` without a tier (none given, or it could not be created, which was
    ///   warned about).
    func report() -> Report? {
        guard let cache else { return nil }
        let address = "\(cache.configuration.host):\(cache.configuration.port)"
        var problem: Problem?
        if case .failure(let error) = attempt(on: cache, { _ = try await $0.tagVersions(for: []) }) {
            problem = Problem(error, host: address, namespace: cache.configuration.namespace)
        }
        return Report(
            address: address, namespace: cache.configuration.namespace, problem: problem, health: cache.health)
    }

    /// Runs `body` against `cache` and waits for it.
    private func attempt<Result: Sendable>(
        on cache: RedisCache<String, Data>,
        _ body: @escaping @Sendable (RedisCache<String, Data>) async throws -> Result
    ) -> Swift.Result<Result, any Error> {
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result = await Swift.Result { try await body(cache) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.value ?? .failure(CancellationError())
    }

    /// Runs `body` against the tier and waits for it; `nil` when there is no healthy tier or it failed.
    private func call<Result: Sendable>(
        _ body: @escaping @Sendable (RedisCache<String, Data>) async throws -> Result
    ) -> Result? {
        guard let cache, isHealthy.value else { return nil }
        switch attempt(on: cache, body) {
        case .success(let value):
            return value
        case .failure(let error as CacheError) where error.code == .entryTooLarge:
            return nil
        case .failure(let error):
            isHealthy.withLock { $0 = false }
            Self.warn(
                about: error, host: "\(cache.configuration.host):\(cache.configuration.port)",
                namespace: cache.configuration.namespace)
            return nil
        }
    }

    /// The one warning line for a tier that failed: a master key other than the namespace's and a server
    /// that does not speak RESP get their own words, since waiting would fix neither; anything else reads
    /// as the passing outage it is.
    private static func warn(about error: any Error, host: String, namespace: String) {
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
