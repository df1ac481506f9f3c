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

/// `strata exec`: run a command once, replay its result while fresh.
///
/// Flow for one invocation (see Docs/CLI.md, "exec"):
/// 1. Look the key up without a lock. Fresh → replay. Stale but within `--stale` → replay and start a
///    detached refresh. Otherwise:
/// 2. Take the store's cross-process lock for the key (`DiskCache.withLock(forKey:)`), look again
///    (another process may have just stored it), and only if still missing run the command, echoing
///    its output live, store the result (exit 0 only unless `--cache-failures`), release the lock.
/// A replay returns the recorded exit status; a run returns the command's own. Either one whose stdout
/// reader went away returns 141 (128 + SIGPIPE).
struct ExecCommand {
    var options: ExecOptions
    var store: DiskCache<String, Data>
    var storePath: String
    /// The store, and the Redis tier under it if any: results are read and kept through it, and shared
    /// through Redis.
    var shared: SharedTier
    /// Seconds a process waits for another machine's run of the command before it says so, once, on stderr
    /// (`STRATA_WAIT_NOTICE_DELAY`, a test-only setting; 3 by default).
    var waitNoticeDelay: Double = 3

    /// The default cap on collected output when `--max-output` is not given: 1 GiB (2^30 bytes).
    static let defaultOutputLimit = 1 << 30

    /// How a record looks from now.
    enum Freshness {
        case fresh
        case stale
        case unusable
    }

    /// Runs the command or replays it, per the flow above.
    ///
    /// - Returns: The exit status to end the process with.
    /// - Throws: `CLIFailure.store` when the store cannot be read or locked, `CLIFailure.launch` when the
    ///   command cannot start.
    func run() throws(CLIFailure) -> Int32 {
        let key = try makeKey().storeKey
        if let status = try serveStored(key) { return status }
        let status = try locked(key) { () throws(CLIFailure) -> Int32 in
            // Another process may have stored the result while this one waited for the lock.
            if let status = try serveStored(key) { return status }
            // With Redis, one machine of all those sharing it runs the command; the others replay its result.
            if shared.sharesLoads { return try runOnceAcrossMachines(keeping: key) }
            return try runCommand(keeping: key)
        }
        if let status { return status }
        // A store this user may only read (another user's, or on a read-only file system): the command
        // still runs, once, with its output and status passed through; nothing can be kept. The warning
        // follows the run, so a command that cannot start ends with its one error line alone.
        let uncached = try runCommand(keeping: nil)
        StandardStreams.printError(
            "strata: warning: result not cached: store \(storePath) is read-only for this process; the command "
                + "ran without caching")
        return uncached
    }

    /// Runs the command, echoing its output, and keeps the result under `key` when it qualifies (`nil`:
    /// keep nothing).
    ///
    /// - Returns: The command's exit status.
    func runCommand(keeping key: String?) throws(CLIFailure) -> Int32 {
        var result = try ChildProcess.run(options.arguments, echoesOutput: true, outputLimit: outputLimit)
        switch result.outcome {
        case .complete:
            if let key { keep(&result, key: key) }
        case .outputClosed:
            // Like a pipeline member whose reader went away: quiet, nothing kept, the status a shell
            // reports for a command that SIGPIPE ended.
            return 128 + SIGPIPE
        case .overLimit:
            if key != nil {
                StandardStreams.printError(
                    "strata: warning: result not cached: the command's output passed the cap of "
                        + "\(outputLimit ?? 0) bytes (\(outputLimitSource)); it was shown but not kept")
            }
        }
        return result.status
    }

    /// The detached refresh started by a stale hit: under the key's lock, runs the command again unless
    /// another process refreshed it meanwhile, and stores the result. Prints nothing.
    ///
    /// - Throws: `CLIFailure` as ``run()``; the detached process's exit status is not observed by anyone.
    func refreshInBackground() throws(CLIFailure) {
        let key = try makeKey().storeKey
        // A read-only store cannot keep the refreshed result: nothing to do.
        _ = try locked(key) { () throws(CLIFailure) in
            if let record = try lookUp(key), freshness(of: record) == .fresh { return }
            var result = try ChildProcess.run(options.arguments, echoesOutput: false, outputLimit: outputLimit)
            if result.outcome == .complete { keep(&result, key: key, warns: false) }
        }
    }

    // MARK: - Store access

    private func makeKey() throws(CLIFailure) -> ExecKey {
        try ExecKey(arguments: options.arguments, variableNames: options.keyEnvironment, directory: options.directory)
    }

    /// `--max-output`, or by default 1 GiB or the store's `--max-size` when that is smaller (a result
    /// larger than the store's limit could not be stored anyway).
    var outputLimit: Int? {
        if options.hasOutputLimit { return options.outputLimit }
        return min(Self.defaultOutputLimit, store.configuration.byteLimit ?? Int.max)
    }

    /// Which setting ``outputLimit`` comes from, for the warning.
    var outputLimitSource: String {
        if options.hasOutputLimit { return "--max-output" }
        if let maxBytes = store.configuration.byteLimit, maxBytes < Self.defaultOutputLimit { return "--max-size" }
        return "the default --max-output"
    }

    private func lookUp(_ key: String) throws(CLIFailure) -> ExecRecord? {
        let data: Data?
        do {
            // Redis decides while it answers (another machine's result is kept locally); see SharedTier.
            data = try shared.value(forKey: key)
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
        return data.flatMap(ExecRecord.init(serialized:))
    }

    func freshness(of record: ExecRecord) -> Freshness {
        guard let freshUntil = record.freshUntil else { return .fresh }
        let now = store.clock.now
        if now < freshUntil { return .fresh }
        if let window = options.staleWindow, now < freshUntil.addingTimeInterval(window) { return .stale }
        return .unusable
    }

    /// Runs `body` under the key's lock; `nil` without running it when the store is read-only for this
    /// process (the lock file cannot be created).
    private func locked<R>(_ key: String, _ body: () throws(CLIFailure) -> R) throws(CLIFailure) -> R? {
        // withLock rethrows untyped errors; keep the typed failure from the body intact.
        do {
            return try store.withLock(forKey: key) { try body() }
        } catch let failure as CLIFailure {
            throw failure
        } catch let error as CacheError where error.code == .readOnly {
            return nil
        } catch {
            throw CLIFailure.store(error, store: storePath)
        }
    }

    /// Stores a finished run when it qualifies. A failed write does not change the command's exit status
    /// (its output was already shown): it is reported on stderr as a warning.
    ///
    /// The record is built in the collected stdout's own buffer, which `result` gives up (it is left
    /// empty), so a large output is not held twice.
    private func keep(_ result: inout ChildResult, key: String, warns: Bool = true) {
        guard result.status == 0 || options.cachesFailures else { return }
        let now = store.clock.now
        let freshUntil = options.timeToLive.map { now.addingTimeInterval($0) }
        let standardOutput = result.standardOutput
        result.standardOutput = Data()
        let serialized = ExecRecord.serialize(
            status: result.status, freshUntil: freshUntil, standardOutput: consume standardOutput,
            standardError: result.standardError)
        let expiry: Expiry = freshUntil.map { .at($0.addingTimeInterval(options.staleWindow ?? 0)) } ?? .never
        do {
            let entry = CacheEntry(value: serialized, expiresAt: expiry.expirationDate(from: now), tags: options.tags)
            try shared.setEntry(entry, forKey: key)
        } catch {
            if warns {
                if case .store(let message) = CLIFailure.store(error, store: storePath) {
                    StandardStreams.printError("strata: warning: result not cached: \(message)")
                }
            }
        }
    }

    // MARK: - Replay and refresh

    /// Replays the stored result when it is fresh, or stale within `--stale` (then also starting a
    /// background refresh).
    ///
    /// - Returns: The recorded exit status, or `nil` when there is nothing usable to replay.
    private func serveStored(_ key: String) throws(CLIFailure) -> Int32? {
        guard let record = try lookUp(key) else { return nil }
        switch freshness(of: record) {
        case .fresh:
            return replay(record)
        case .stale:
            startBackgroundRefresh()
            return replay(record)
        case .unusable:
            return nil
        }
    }

    func replay(_ record: ExecRecord) -> Int32 {
        // A reader that went away ends the replay as it ends a run (and `cat`): quietly, with the status a
        // shell reports for SIGPIPE, so `set -o pipefail` scripts see the same thing either way.
        guard StandardStreams.write(record.standardOutput, to: STDOUT_FILENO) else { return 128 + SIGPIPE }
        StandardStreams.write(record.standardError, to: STDERR_FILENO)
        return record.status
    }

    /// Re-executes this tool with the hidden `--background-refresh` flag and the same arguments, in a new
    /// session with its standard streams on /dev/null; the environment and working directory are
    /// inherited, so the refresh computes the same key.
    func startBackgroundRefresh() {
        let program = RawProcess.programName
        let executable = RawProcess.executablePath ?? program
        ChildProcess.spawnDetached(
            path: executable, arguments: [program, ByteString("--background-refresh")] + RawProcess.arguments)
    }
}
