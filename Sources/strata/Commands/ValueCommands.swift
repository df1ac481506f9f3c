import CacheCore
import DiskCache
import Foundation

/// `set`, `get` and `rm`: the key-value commands.
struct ValueCommands {
    var store: DiskCache<String, Data>
    var storePath: String

    /// `strata set KEY [VALUE] [--ttl D]`: stores VALUE's UTF-8 bytes, or all of stdin.
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.usage` for a reserved key, `CLIFailure.store` when the write fails.
    func set(key: String, value: String?, timeToLive: TimeInterval?) throws(CLIFailure) -> Int32 {
        try refuseReserved(key, command: "set")
        let bytes: Data
        if let value {
            bytes = Data(value.utf8)
        } else {
            bytes = try StandardStreams.readToEnd(STDIN_FILENO)
        }
        let expiry: Expiry = timeToLive.map { .seconds($0) } ?? .never
        do {
            try store.setValue(bytes, forKey: key, expiry: expiry)
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        return ExitStatus.success
    }

    /// `strata get KEY`: writes the value's bytes to stdout.
    ///
    /// - Returns: 0 on a hit, 1 on a miss (nothing printed).
    /// - Throws: `CLIFailure.usage` for a reserved key, `CLIFailure.store` when the read or the write to
    ///   stdout fails.
    func get(key: String) throws(CLIFailure) -> Int32 {
        try refuseReserved(key, command: "get")
        let value: Data?
        do {
            value = try store.value(forKey: key)
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        guard let value else { return ExitStatus.miss }
        guard StandardStreams.write(value, to: STDOUT_FILENO) else {
            throw .store("cannot write to standard output: \(String(cString: strerror(errno)))")
        }
        return ExitStatus.success
    }

    /// `strata rm KEY`: removes the entry; removing an absent key succeeds (like `rm -f`).
    ///
    /// - Returns: 0.
    /// - Throws: `CLIFailure.store` when the store cannot remove the file.
    func remove(key: String) throws(CLIFailure) -> Int32 {
        do {
            try store.removeEntry(forKey: key)
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        return ExitStatus.success
    }

    private func refuseReserved(_ key: String, command: String) throws(CLIFailure) {
        if key.hasPrefix(ExecKey.prefix) {
            throw .usage("keys starting with '\(ExecKey.prefix)' are reserved for exec", command: command)
        }
    }
}
