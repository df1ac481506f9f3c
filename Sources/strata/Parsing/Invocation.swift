#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Options that apply to every command; they may appear before or after the command's name.
struct GlobalOptions {
    /// `--store DIR`: the store's folder, or `nil` for the default store.
    var storePath: String?
    /// `--max-size`: the byte limit, `nil` for unlimited.
    var maxBytes: Int?
    /// `--max-entries`: the entry limit, `nil` for unlimited.
    var maxEntries: Int?
    /// `--redis URL`: a Redis tier stacked under the store (`STRATA_REDIS_URL` when not given).
    var redisURL: String?
    /// `--redis-ca-file`, `--redis-client-cert`, `--redis-client-key`: the TLS files given on the command
    /// line, by option name (their environment variables are read in ``RedisConnectionSettings``).
    var redisFiles: [String: String] = [:]
    /// `--redis-connect-timeout` (seconds for connecting, TCP and the TLS handshake) and `--redis-timeout`
    /// (seconds for each request's write and reply), by option name.
    var redisDeadlines: [String: TimeInterval] = [:]
    /// Hidden `--background-refresh`: this process is a detached `exec --stale` refresh.
    var isBackgroundRefresh = false
}

/// What `strata exec` was asked to do.
struct ExecOptions {
    /// `--ttl`: seconds the result stays fresh; `nil` keeps it until removed or evicted.
    var timeToLive: TimeInterval?
    /// `--key-env`: names of environment variables that are part of the key, in the order given.
    var keyEnvironment: [String] = []
    /// `--cache-failures`: keep runs that exit non-zero too.
    var cachesFailures = false
    /// `--stale`: seconds past freshness during which a result is replayed while refreshing it in the
    /// background; `nil` never serves a stale result.
    var staleWindow: TimeInterval?
    /// `--lease`: with `--redis`, how long one machine's run may take before the machines waiting for it
    /// run the command too, and how long a dead runner holds them off (the Redis tier's load lease); `nil`
    /// for the tier's default of 10 s.
    var leaseDuration: TimeInterval?
    /// `--max-output`: bytes of stdout plus stderr collected at most; past it the output is still shown
    /// but not kept. `nil` (`none`) for no cap; meaningful only when ``hasOutputLimit``.
    var outputLimit: Int?
    /// `--key-cwd`: what of the working directory is part of the key.
    var directory = ExecDirectory.absolute
    /// Whether `--max-output` was given (otherwise the default cap applies).
    var hasOutputLimit = false
    /// The command and its arguments, byte for byte as given.
    var arguments: [ByteString] = []
    /// `--tag`: the tags the kept result carries.
    var tags: Set<String> = []
}

/// One parsed command line.
enum Command {
    /// `value` holds the argument's raw bytes, or `nil` to read stdin.
    case set(key: String, value: Data?, timeToLive: TimeInterval?)
    case get(key: String)
    case remove(key: String)
    /// `rm --tag T...`: removes every entry carrying any of the invocation's tags.
    case removeTagged
    case clear
    case list(json: Bool)
    case stats(json: Bool)
    case trim
    case verify
    /// `strata migrate`: moves a file-per-entry store to the SQLite engine.
    case migrate
    case exec(ExecOptions)
    /// `--help` or `help [COMMAND]`: help for one command, or general help when `nil`.
    case help(command: String?)
    case version
    /// `completion SHELL`: prints the completion script for `bash`, `zsh` or `fish`.
    case completion(shell: String)

    /// Whether the store is opened with this invocation's `--max-size`/`--max-entries`: only commands
    /// that add entries apply them. A read must not evict what it came for, nor pay the scan that
    /// applying a limit at open costs (O(*n*) in the entries); `trim` opens without them and applies them
    /// itself, so that it can count what it evicts.
    var appliesLimits: Bool {
        switch self {
        case .set, .exec: true
        case .get, .remove, .removeTagged, .clear, .list, .stats, .trim, .verify, .migrate, .help, .version,
            .completion:
            false
        }
    }
}

/// A parsed command line: the command plus the global options.
struct Invocation {
    var globals = GlobalOptions()
    var command: Command
    /// `--tag` (repeatable; `set`, `exec`, `rm`): the tags to store entries with, or to remove.
    var tags: Set<String> = []
}
