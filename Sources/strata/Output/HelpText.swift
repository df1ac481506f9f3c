/// The tool's help and usage texts.
enum HelpText {
    /// The version `--version` prints.
    static let version = "0.1.0"

    /// One usage line per command.
    static let usageLines: [String: String] = [
        "set": "strata set KEY [VALUE] [--ttl DURATION] [--tag TAG]...",
        "get": "strata get KEY",
        "rm": "strata rm KEY | strata rm --tag TAG...",
        "clear": "strata clear",
        "ls": "strata ls [--json]",
        "stats": "strata stats [--json]",
        "trim": "strata trim",
        "verify": "strata verify",
        "migrate": "strata migrate",
        "exec":
            "strata exec [--ttl D] [--key-env VAR]... [--key-cwd absolute|none|relative:ROOT] [--cache-failures] "
            + "[--stale D] [--max-output SIZE] [--tag TAG]... [--lease D] -- CMD [ARG...]",
        "completion": "strata completion bash|zsh|fish",
        "help": "strata help [COMMAND]",
    ]

    /// What each command does, for `strata help COMMAND`.
    static let details: [String: String] = [
        "set": """
        Stores VALUE's bytes (or, when VALUE is omitted, all of standard input, byte for byte) under
        KEY. KEY must be UTF-8 text; keys starting with "exec:" are reserved for exec.

        --ttl DURATION   expire the entry after DURATION: 90s, 10m, 2h, 7d, 1h30m, or plain seconds
                         (units ms s m h d w, lower case; m is minutes)
        --tag TAG        the entry carries TAG, so strata rm --tag TAG removes it; repeatable
        """,
        "get": """
        Writes the value stored under KEY to standard output, unchanged.
        A missing or expired key prints nothing and exits 1.
        """,
        "rm": """
        Removes KEY (an exec: key too). Removing a key that is not there succeeds.

        --tag TAG   instead of a KEY: removes every entry carrying TAG (from the store, and from
                    Redis with --redis); repeatable. Costs the same however many entries carry it.
        """,
        "clear": """
        Removes every entry: the store's key epoch is rotated first, so nothing written before
        can be decrypted any more, then the files are deleted. Shows progress on a terminal when it
        takes a while.
        """,
        "ls": """
        Lists live entries: size in bytes, expiry (UTC, or "never"), key, then "[tags: ...]" for a
        tagged entry. exec entries are shown as "exec: COMMAND ... (in DIR)".  --json prints an
        array of objects instead.
        """,
        "stats": """
        Prints entries and bytes held, the limits given to this invocation, and the hits, misses,
        insertions, evictions and expirations counted since the store was created; with --redis,
        whether the server answers now, its circuit breaker and this run's connection counters.
        --json for JSON.
        """,
        "trim":
            "Removes expired and tag-removed entries, then evicts least-recently-used entries until within the limits.",
        "verify": """
        Authenticates every entry, removes the ones that fail, and lists them.
        Exits 1 when any entry was removed. Shows progress on a terminal when it takes a while.
        """,
        "migrate": """
        Moves the store from one file per entry to the SQLite engine, in place, keeping every live
        entry. Safe to interrupt: run it again to resume. Run it while no other strata uses the store.
        """,
        "exec": """
        Runs CMD once and keeps its standard output, standard error and exit status, keyed by the
        argument list, the working directory and the variables named by --key-env. While the
        result is fresh, replays it (stdout, then stderr) with the same exit status, without
        running CMD. Concurrent runs of one key in one store run CMD once; with --redis, so do
        runs on every machine sharing the Redis server and the store's master key, for up to
        --lease (a wait longer than that runs CMD on the waiting machine too).
        Put -- before CMD: without it, a strata option after CMD is refused rather than passed on.
        If standard output is closed while CMD runs (strata exec -- yes | head), CMD is stopped,
        nothing is kept, and strata exits 141 without a message, as a pipeline would.

        --ttl D            keep the result fresh for D (default: until removed or evicted)
        --key-env VAR      make VAR's value (or its absence) part of the key; repeatable
        --key-cwd WHAT     what of the working directory is in the key: absolute (default), none,
                           or relative:ROOT (the path below ROOT, so checkouts at different paths
                           share results; a directory outside ROOT is an error)
        --cache-failures   keep runs that exit non-zero too (default: only exit status 0)
        --stale D          up to D after it went stale, replay the old result at once and refresh
                           it in a detached background process
        --max-output SIZE  keep at most SIZE bytes of stdout plus stderr (default: 1GiB, or
                           --max-size when smaller; none for no cap); a larger output is still
                           shown, but not kept, with one warning
        --tag TAG          the kept result carries TAG (strata rm --tag TAG removes it); repeatable
        --lease D          with --redis: how long other machines wait for this run before they run
                           CMD too, and how long a runner that died holds them off (default 10s);
                           set it above CMD's longest run
        """,
        "completion": """
        Prints a completion script for the shell: commands, options, and the values some options take
        (--key-cwd's forms, folders for --store, files for the --redis-... files, variables for
        --key-env). Tags are not completed: listing them would decrypt every entry.

          bash:  source <(strata completion bash)           (in ~/.bashrc)
          zsh:   source <(strata completion zsh)            (in ~/.zshrc, after compinit)
          fish:  strata completion fish > ~/.config/fish/completions/strata.fish
        """,
        "help": "Shows help for a command.",
    ]

    /// The general help, for `strata --help`.
    static var general: String {
        let commands = ArgumentParser.commandNames.compactMap { usageLines[$0] }.map { "  " + $0 }
        return """
            strata \(version) — an encrypted disk-backed key-value store and command memoizer.

            usage: strata [GLOBAL OPTIONS] COMMAND [ARGS]

            commands:
            \(commands.joined(separator: "\n"))

            global options (before or after the command):
              --store DIR          use the store in DIR (default: the "strata" store in the user's caches folder)
              --max-size SIZE      byte limit: 500MB, 1.5G (powers of 1000), 2GiB (powers of 1024), 4096, none
              --max-entries N      entry limit, or none; 0 keeps nothing
              --redis URL          share values and exec results through Redis under the store:
                                   redis://[user:password@]host[:port][,host[:port]...][/namespace]
                                   (same master key everywhere; any node of a Redis Cluster is enough)
                                   or rediss://... for TLS, verified against the system's trust store
              --redis-ca-file FILE      rediss://: trust the CAs in this PEM file instead of the system's
              --redis-client-cert FILE  rediss://: client certificate (PEM) for servers that require one
              --redis-client-key FILE   rediss://: its private key (PEM, unencrypted)
              --redis-connect-timeout D  deadline to connect, TLS handshake included (default 250ms)
              --redis-timeout D    deadline for each request's write and reply (default 100ms and 50ms);
                                   raise it for a server across a slow or distant link
              -h, --help           show help;  strata help COMMAND for one command
              -V, --version        print the version

            durations (--ttl, --stale): a number and a unit, no space: 90s, 10m, 2h, 1d, 1w, 250ms, 1h30m;
              a bare number is seconds

            environment:
              STRATA_MASTER_KEY           master key, base64 of 32 bytes (default: a key file created on first use)
              STRATA_REDIS_URL            the --redis URL when the option is not given
              STRATA_REDIS_CA_FILE, STRATA_REDIS_CLIENT_CERT, STRATA_REDIS_CLIENT_KEY,
              STRATA_REDIS_CONNECT_TIMEOUT, STRATA_REDIS_TIMEOUT
                                          the --redis-... options when not given (ignored without a Redis URL)

            exit status:
              0 success   1 miss, or verify removed bad entries   2 usage error
              3 store, key or I/O failure   126 command not executable   127 command not found
              exec replays or passes through the command's own status; 141 when stdout was closed by its reader.

            strata help COMMAND shows one command's usage and options.

            """
    }

    /// The help for one command.
    ///
    /// - Parameter command: A command name from ``ArgumentParser/commandNames``.
    /// - Returns: Its usage line and description.
    static func command(_ command: String) -> String {
        "usage: \(usageLines[command] ?? "strata --help")\n\n\(details[command] ?? "")\n"
    }

    /// The usage printed after a usage error.
    ///
    /// - Parameter command: The command being parsed, or `nil` for the general usage.
    /// - Returns: One or two lines starting with `usage:`.
    static func usage(for command: String?) -> String {
        if let command, let line = usageLines[command] {
            return "usage: \(line)\n       (strata help \(command) for details)"
        }
        return "usage: strata [--store DIR] [--max-size SIZE] [--max-entries N] [--redis URL] COMMAND [ARGS]\n"
            + "       commands: \(ArgumentParser.commandNames.joined(separator: ", ")); strata --help for details"
    }
}
