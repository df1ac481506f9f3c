import CacheCore
import DiskCache

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

/// `set`, `get` and `rm`: the key-value commands.
struct ValueCommands {
    var store: DiskCache<String, Data>
    var storePath: String
    /// The store, and the Redis tier under it if any: what values are read from and written to.
    var shared: SharedTier

    /// The line `set` prints on stderr before it reads a value from a terminal, so that a `strata set KEY`
    /// typed without a value does not seem to hang; `nil` when stdin is a pipe or a file (scripts see
    /// nothing extra).
    ///
    /// - Parameter isTerminal: Whether stdin is a terminal.
    /// - Returns: The line, or `nil`.
    static func standardInputPrompt(isTerminal: Bool) -> String? {
        guard isTerminal else { return nil }
        return "strata: reading the value from standard input; end it with Ctrl-D (or give it after the key)"
    }

    /// `strata set KEY [VALUE] [--ttl D] [--tag T]...`: stores VALUE's bytes exactly as given, or all of
    /// stdin, carrying `tags`.
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the write fails. (The parser has refused a reserved key.)
    func set(key: String, value: Data?, timeToLive: TimeInterval?, tags: Set<String> = []) throws(CLIFailure) -> Int32 {
        let bytes: Data
        let limit = Self.inputLimit(maxBytes: store.configuration.byteLimit)
        if value == nil, let prompt = Self.standardInputPrompt(isTerminal: StandardStreams.isTerminal(STDIN_FILENO)) {
            StandardStreams.printError(prompt)
        }
        if let value {
            bytes = value
        } else if let input = try StandardStreams.readToEnd(STDIN_FILENO, limit: limit) {
            bytes = input
        } else {
            // More than the store can hold (its size limit, or the format's largest entry without one):
            // refused as soon as the input passed that, so an endless stdin cannot grow memory. The earlier
            // value goes, as for any value too large.
            try? shared.removeEntry(forKey: key)
            throw .store(
                "store \(storePath): the value (more than \(limit) bytes) does not fit the size limit of \(limit) "
                    + "bytes and was not stored; '\(key)' now has no value")
        }
        let expiry: Expiry = timeToLive.map { .seconds($0) } ?? .never
        do {
            let entry = CacheEntry(value: bytes, expiresAt: expiry.expirationDate(from: store.clock.now), tags: tags)
            try shared.setEntry(entry, forKey: key)
        } catch let error as CacheError where error.code == .entryTooLarge {
            // DiskCache has dropped any earlier value of the key (so no stale value survives the write);
            // the sentence holds whether or not there was one.
            // The limit bounds the whole entry (value, key and record), so a value smaller than the limit can
            // still be refused: the sentence says so rather than compare the value alone with the limit.
            let limit = store.configuration.byteLimit.map { " of \($0) bytes" } ?? ""
            let value = bytes.count == 1 ? "1 byte" : "\(bytes.count) bytes"
            throw .store(
                "store \(storePath): the entry (a value of \(value), with its key and record) does not fit the size "
                    + "limit\(limit) and was not stored; '\(key)' now has no value")
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        return ExitStatus.success
    }

    /// The most bytes of stdin `set` reads: the store's size limit, or without one the largest entry the
    /// format holds (``DiskCacheConfiguration/largestEntrySize``, about 2 GiB). A longer input cannot be
    /// stored, so reading stops one byte past this and the value is refused.
    ///
    /// - Parameter maxBytes: The store's `--max-size` in bytes, `nil` for none.
    /// - Returns: The bound in bytes.
    static func inputLimit(maxBytes: Int?) -> Int {
        min(maxBytes ?? .max, DiskCacheConfiguration.largestEntrySize)
    }

    /// `strata get KEY`: writes the value's bytes to stdout.
    ///
    /// - Returns: 0 on a hit, 1 on a miss (nothing printed).
    /// - Throws: `CLIFailure.store` when the read or the write to stdout fails. (The parser has refused a
    ///   reserved key.)
    func get(key: String) throws(CLIFailure) -> Int32 {
        let value: Data?
        do {
            value = try shared.value(forKey: key)
        } catch {
            throw CLIFailure.read(error, store: storePath)
        }
        guard let value else { return ExitStatus.miss }
        guard StandardStreams.write(value, to: STDOUT_FILENO) else {
            throw .outputWriteFailed(errno: errno)
        }
        return ExitStatus.success
    }

    /// `strata rm KEY`: removes the entry; removing an absent key succeeds (like `rm -f`).
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the store cannot remove the file.
    func remove(key: String) throws(CLIFailure) -> Int32 {
        do {
            try shared.removeEntry(forKey: key)
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        return ExitStatus.success
    }

    /// `strata rm --tag T...`: every entry carrying any of `tags` becomes a miss, in the store and in Redis
    /// (one counter write per tag each, however many entries carry it).
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the store cannot advance a tag's counter.
    func remove(taggedWith tags: Set<String>) throws(CLIFailure) -> Int32 {
        for tag in tags.sorted() {
            do {
                try shared.removeAll(taggedWith: tag)
            } catch {
                throw CLIFailure.store(error, store: storePath)
            }
        }
        return ExitStatus.success
    }
}
