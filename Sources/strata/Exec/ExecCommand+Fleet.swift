import CacheCore
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

// `strata exec --redis`: the command runs once across every machine sharing the Redis namespace (issue 27,
// part 5). The run is the loader of a `MultiCache` load: the Redis tier's lease lets one process run it while
// the others wait for its result and replay it (Docs/CLI.md, "exec with Redis").
extension ExecCommand {
    /// A run that must not be kept: a failure without `--cache-failures`, output past the cap, or a reader
    /// that went away. Thrown from the loader, so no tier stores anything and a waiting machine runs the
    /// command itself; carries the status this process ends with.
    struct UnkeptRun: Error {
        var status: Int32
    }

    /// Runs the command here, or waits for the machine that runs it and replays its result; keeps a result
    /// that qualifies in both tiers, under `key`.
    ///
    /// - Returns: The command's exit status (run here) or the recorded one (replayed).
    /// - Throws: `CLIFailure.launch` when the command cannot start; `CLIFailure.store` when the store fails.
    func runOnceAcrossMachines(keeping key: String) throws(CLIFailure) -> Int32 {
        let progress = FleetRunProgress()
        DispatchQueue.global().asyncAfter(deadline: .now() + waitNoticeDelay) {
            guard progress.isWaiting else { return }
            StandardStreams.printError(
                "strata: waiting for another machine sharing the Redis server to finish this command")
        }
        defer { progress.finish() }
        let outcome: Result<Data?, any Error>
        do {
            outcome = .success(try shared.load(key, expiry: expiry, tags: options.tags, orLoad: loader(progress)))
        } catch {
            outcome = .failure(error)
        }
        // The wait is over: a replay slowed by its reader must not count as waiting when the notice falls due.
        progress.finish()
        if let status = progress.statusRunHere {
            if case .success(let data?) = outcome { keepRunHere(data, key: key) }
            return status
        }
        switch outcome {
        case .success(let data):
            if let data, let record = ExecRecord(serialized: data) {
                // Judged as a stored record is: Redis keeps a record for its writer's --stale window, which may
                // be longer than this run's.
                let freshness = freshness(of: record)
                guard freshness != .unusable else { return try runCommand(keeping: key) }
                shared.keepLocalCopy(
                    CacheEntry(
                        value: data, expiresAt: expiry.expirationDate(from: store.clock.now), tags: options.tags),
                    forKey: key)
                if freshness == .stale { startBackgroundRefresh() }
                return replay(record)
            }
            // Redis could not be used (warned about), or what landed is not a record of this tool: run it
            // here, kept in the store.
            return try runCommand(keeping: key)
        case .failure(let unkept as UnkeptRun):
            return unkept.status
        case .failure(let failure as CLIFailure):
            throw failure
        case .failure(let error):
            throw CLIFailure.store(error, store: storePath)
        }
    }

    /// Keeps a record this process ran. The load stored it in Redis through its fence, which refuses it when
    /// the key was removed (`rm`, `rm --tag`, `clear`) anywhere since the run began; so Redis is asked what it
    /// holds: the record (the store keeps a copy), something else or nothing (a removal won, or the record is
    /// over the tier's size limit: the store keeps it, and a later read through Redis drops it unless it is too
    /// large for Redis), or no answer (Redis was lost mid-run, and the load's store failed silently: the record
    /// goes through both tiers, so the pending-writes journal keeps it for Redis, with one warning).
    private func keepRunHere(_ record: Data, key: String) {
        let entry = CacheEntry(
            value: record, expiresAt: expiry.expirationDate(from: store.clock.now), tags: options.tags)
        guard shared.redisAnswers(forKey: key) == nil else {
            shared.keepLocalCopy(entry, forKey: key)
            return
        }
        do {
            try shared.setEntry(entry, forKey: key)
        } catch {
            if case .store(let message) = CLIFailure.store(error, store: storePath) {
                StandardStreams.printError("strata: warning: result not cached: \(message)")
            }
        }
    }

    /// The lifetime of a kept result: fresh for `--ttl`, then kept for `--stale` more; resolved when the run
    /// ends.
    private var expiry: Expiry {
        options.timeToLive.map { .seconds($0 + (options.staleWindow ?? 0)) } ?? .never
    }

    /// The run as a loader: echoes the output live, returns the record to keep, or throws ``UnkeptRun``.
    private func loader(_ progress: FleetRunProgress) -> @Sendable () async throws -> Data {
        let arguments = options.arguments
        let outputLimit = outputLimit
        let outputLimitSource = outputLimitSource
        let cachesFailures = options.cachesFailures
        let timeToLive = options.timeToLive
        let clock = store.clock
        return {
            progress.start()
            var result = try ChildProcess.run(arguments, echoesOutput: true, outputLimit: outputLimit)
            progress.ranHere(status: result.outcome == .outputClosed ? 128 + SIGPIPE : result.status)
            switch result.outcome {
            case .complete:
                guard result.status == 0 || cachesFailures else { throw UnkeptRun(status: result.status) }
                let freshUntil = timeToLive.map { clock.now.addingTimeInterval($0) }
                let standardOutput = result.standardOutput
                result.standardOutput = Data()
                return ExecRecord.serialize(
                    status: result.status, freshUntil: freshUntil, standardOutput: consume standardOutput,
                    standardError: result.standardError)
            case .outputClosed:
                throw UnkeptRun(status: 128 + SIGPIPE)
            case .overLimit:
                StandardStreams.printError(
                    "strata: warning: result not cached: the command's output passed the cap of "
                        + "\(outputLimit ?? 0) bytes (\(outputLimitSource)); it was shown but not kept")
                throw UnkeptRun(status: result.status)
            }
        }
    }
}

/// Whether this process's run started and how it ended, shared by the loader's task, the wait notice's timer
/// and the main thread.
///
/// `@unchecked Sendable` is sound: its two fields are read and written only inside `queue.sync` (the
/// library's lock type is not public; see `DeferredWarnings`).
final class FleetRunProgress: @unchecked Sendable {
    private let queue = DispatchQueue(label: "strata.exec.fleet-run")
    private var started = false
    private var finished = false
    private var status: Int32?

    /// Whether the process still waits for another machine's run (the notice is due).
    var isWaiting: Bool { queue.sync { !started && !finished } }
    /// The status of the run made here; `nil` when another machine ran the command.
    var statusRunHere: Int32? { queue.sync { status } }

    func start() { queue.sync { started = true } }
    func ranHere(status: Int32) { queue.sync { self.status = status } }
    func finish() { queue.sync { finished = true } }
}
