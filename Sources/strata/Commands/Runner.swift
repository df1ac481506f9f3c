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
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses the command line, runs the command, and turns every outcome into an exit status.
///
/// This is the one place failures are caught: each ends as a one-line message on stderr (plus the usage
/// for usage errors) and its documented exit status. Nothing here or below traps.
enum Runner {
    /// Runs the tool.
    ///
    /// - Parameters:
    ///   - arguments: The argument vector without the program name, as raw bytes.
    ///   - environment: The process environment.
    /// - Returns: The exit status.
    static func run(arguments: [ByteString], environment: [String: String]) -> Int32 {
        do {
            let status = try dispatch(ArgumentParser.parse(arguments), environment: environment)
            DeferredWarnings.flush()
            return status
        } catch {
            // One line for a failure: warnings that led up to it would only say it twice.
            DeferredWarnings.discard()
            switch error {
            case .usage(let message, let command):
                StandardStreams.printError("strata: \(oneLine(message))\n\(HelpText.usage(for: command))")
            case .store(let message), .launch(let message, _), .badSetting(let message):
                StandardStreams.printError("strata: \(oneLine(message))")
            case .outputClosed:
                break  // the reader chose to stop reading; nothing to report
            }
            return error.exitStatus
        }
    }

    private static func dispatch(_ invocation: Invocation, environment: [String: String]) throws(CLIFailure) -> Int32 {
        // Only `exec` starts commands, so only it lists the descriptors it inherited (a scan of /proc/self/fd
        // that `get` and `set` would pay for nothing); nothing before this line opens a descriptor.
        if case .exec = invocation.command { DescriptorHygiene.recordInherited() }
        switch invocation.command {
        case .help(let command):
            StandardStreams.printOutput(command.map(HelpText.command) ?? HelpText.general)
            return ExitStatus.success
        case .version:
            StandardStreams.printOutput("strata \(HelpText.version)\n")
            return ExitStatus.success
        case .completion(let shell):
            // Before the store: a script is text about the tool, and a shell profile must not create a key.
            guard StandardStreams.printOutput(CompletionScript.script(for: shell)) else {
                throw .outputWriteFailed(errno: errno)
            }
            return ExitStatus.success
        default:
            break
        }

        let location = try StoreLocation(globals: invocation.globals, environment: environment)
        // Parsed before the store opens, so a bad URL changes nothing.
        var sharedConfiguration = try SharedTier.configuration(
            url: invocation.globals.redisURL ?? environment["STRATA_REDIS_URL"],
            settings: RedisConnectionSettings(globals: invocation.globals, environment: environment),
            location: location)
        if case .exec(let options) = invocation.command, let lease = options.leaseDuration {
            // The wait matches the lease: a waiter gives up exactly when a dead runner's lease would end.
            sharedConfiguration?.loadLease = .init(duration: .seconds(lease), maximumWait: .seconds(lease))
        }
        if case .migrate = invocation.command {
            // Before the store opens: the migration opens both engines itself, and the folder's engine changes.
            return try StoreCommands.migrate(location: location)
        }
        let store = try location.open(applyingLimits: invocation.command.appliesLimits)
        let shared = try SharedTier(store: store, configuration: sharedConfiguration)
        // Counters reach the shared statistics file on deinit too; flushing here also covers exit paths.
        defer { try? store.flushStatistics() }
        let path = location.displayPath
        // Test-only: how long verify and clear run before their progress line may appear (Docs/CLI.md).
        let progressDelay = environment["STRATA_PROGRESS_DELAY"].flatMap(Double.init) ?? 1
        switch invocation.command {
        case .set(let key, let value, let timeToLive):
            return try ValueCommands(store: store, storePath: path, shared: shared).set(
                key: key, value: value, timeToLive: timeToLive, tags: invocation.tags)
        case .get(let key):
            return try ValueCommands(store: store, storePath: path, shared: shared).get(key: key)
        case .remove(let key):
            return try ValueCommands(store: store, storePath: path, shared: shared).remove(key: key)
        case .removeTagged:
            return try ValueCommands(store: store, storePath: path, shared: shared).remove(taggedWith: invocation.tags)
        case .clear:
            return try StoreCommands(store: store, storePath: path, shared: shared, progressDelay: progressDelay)
                .clear()
        case .list(let json):
            return try StoreCommands(store: store, storePath: path).list(json: json)
        case .stats(let json):
            return try StoreCommands(store: store, storePath: path, limits: location.configuration, shared: shared)
                .stats(json: json)
        case .trim:
            return try StoreCommands(store: store, storePath: path, limits: location.configuration).trim()
        case .verify:
            return try StoreCommands(store: store, storePath: path, progressDelay: progressDelay).verify()
        case .exec(let options):
            var command = ExecCommand(options: options, store: store, storePath: path, shared: shared)
            // Test-only: how long a process waits for another machine's run before saying so (Docs/CLI.md).
            if let delay = environment["STRATA_WAIT_NOTICE_DELAY"].flatMap(Double.init), delay >= 0 {
                command.waitNoticeDelay = delay
            }
            if invocation.globals.isBackgroundRefresh {
                try command.refreshInBackground()
                return ExitStatus.success
            }
            return try command.run()
        case .help, .version, .completion, .migrate:
            return ExitStatus.success
        }
    }
}
