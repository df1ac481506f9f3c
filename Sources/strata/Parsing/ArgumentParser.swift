#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns the argument vector into an ``Invocation``.
///
/// Rules (documented in Docs/CLI.md): options start with `--` (`-h` is `--help`, `-V` is `--version`);
/// a value follows as the next argument or after `=`; global options may come before or after the
/// command; `--` ends the options. For `exec`, the first argument that is not an option (or whatever
/// follows `--`) starts the command, and everything after it belongs to the command untouched.
struct ArgumentParser {
    /// Where an option is accepted.
    private enum Scope {
        case global
        case commands(Set<String>)
    }

    private struct OptionSpec {
        var takesValue: Bool
        var scope: Scope

        var isGlobal: Bool {
            if case .global = scope { return true }
            return false
        }
    }

    private static let options: [String: OptionSpec] = [
        "store": OptionSpec(takesValue: true, scope: .global),
        "max-size": OptionSpec(takesValue: true, scope: .global),
        "max-entries": OptionSpec(takesValue: true, scope: .global),
        "redis": OptionSpec(takesValue: true, scope: .global),
        "redis-ca-file": OptionSpec(takesValue: true, scope: .global),
        "redis-client-cert": OptionSpec(takesValue: true, scope: .global),
        "redis-client-key": OptionSpec(takesValue: true, scope: .global),
        "redis-connect-timeout": OptionSpec(takesValue: true, scope: .global),
        "redis-timeout": OptionSpec(takesValue: true, scope: .global),
        "help": OptionSpec(takesValue: false, scope: .global),
        "version": OptionSpec(takesValue: false, scope: .global),
        "background-refresh": OptionSpec(takesValue: false, scope: .global),
        "ttl": OptionSpec(takesValue: true, scope: .commands(["set", "exec"])),
        "json": OptionSpec(takesValue: false, scope: .commands(["ls", "stats"])),
        "key-env": OptionSpec(takesValue: true, scope: .commands(["exec"])),
        "cache-failures": OptionSpec(takesValue: false, scope: .commands(["exec"])),
        "stale": OptionSpec(takesValue: true, scope: .commands(["exec"])),
        "max-output": OptionSpec(takesValue: true, scope: .commands(["exec"])),
        "tag": OptionSpec(takesValue: true, scope: .commands(["set", "exec", "rm"])),
        "key-cwd": OptionSpec(takesValue: true, scope: .commands(["exec"])),
        "lease": OptionSpec(takesValue: true, scope: .commands(["exec"])),
    ]

    /// The option names that make `exec` refuse a command line without `--` when they follow the command:
    /// every documented global option and every `exec` option (the hidden `--background-refresh` is not
    /// something a user types). Only long forms count: `-h` and `-V` are too common as a command's own
    /// flags (`ls -h`, `gcc -V`), and `strata` reads neither after the command anyway.
    static let execOptionNames: Set<String> = Set(
        options.filter { name, spec in
            guard name != "background-refresh" else { return false }
            if case .commands(let allowed) = spec.scope { return allowed.contains("exec") }
            return true
        }.keys)

    private static let shortOptions = ["-h": "help", "-V": "version"]

    /// The command names, in the order help lists them.
    static let commandNames = [
        "set", "get", "rm", "clear", "ls", "stats", "trim", "verify", "migrate", "exec", "completion", "help",
    ]

    /// The shells `strata completion` writes a script for.
    static let completionShells = ["bash", "zsh", "fish"]

    /// The options a user may type for `command` (or, for `nil`, before any command), sorted, without the
    /// leading `--`: every global option, then the command's own; the hidden `--background-refresh` is left
    /// out. Completion scripts are made from this, so they can never offer an option the parser refuses.
    ///
    /// - Parameter command: A name from ``commandNames``, or `nil` for the global options alone.
    /// - Returns: The option names.
    /// - Complexity: O(*n* log *n*) in the number of options.
    static func optionNames(for command: String?) -> [String] {
        let globals = options.filter { $0.value.isGlobal && $0.key != "background-refresh" }.keys.sorted()
        let own = options.filter { _, spec in
            if case .commands(let allowed) = spec.scope, let command { return allowed.contains(command) }
            return false
        }.keys.sorted()
        return globals + own
    }

    /// Whether the option `name` (without `--`) takes a value, so a completion script knows that the word
    /// after it is that value rather than a command.
    ///
    /// - Parameter name: An option name.
    /// - Returns: `true` for an option that takes a value; `false` for a flag or an unknown name.
    static func takesValue(_ name: String) -> Bool {
        options[name]?.takesValue ?? false
    }

    /// Parses `arguments` (without the program name).
    ///
    /// Option names, option values and the command name must be UTF-8 text; keys are checked by the
    /// command; values and `exec`'s command line are kept byte for byte.
    ///
    /// - Parameter rawArguments: The argument vector after `argv[0]`, as the raw bytes.
    /// - Returns: The invocation.
    /// - Throws: `CLIFailure.usage` naming the first problem found.
    static func parse(_ rawArguments: [ByteString]) throws(CLIFailure) -> Invocation {
        var commandName: String?
        var positionals: [ByteString] = []
        var given: [(name: String, value: ByteString?)] = []
        var commandArguments: [ByteString]?
        var index = 0
        var optionsEnded = false
        // Options are ASCII, so matching on the lossy text never mistakes one byte string for another.
        let arguments = rawArguments.map(\.lossyText)

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if commandName == "exec", commandArguments == nil, optionsEnded || !argument.hasPrefix("-") {
                commandArguments = Array(rawArguments[(index - 1)...])
                try rejectSplitDuration(given.last, unitWord: argument, rest: arguments[index...])
                // Only a `--` after `exec` starts the command (that branch is below); one before the
                // command name (`strata -- exec echo hi --ttl 1h`) leaves the check on.
                try rejectOptionAfterCommand(argument, rest: arguments[index...])
                break
            }
            // A lone `-` is a value (stdin's usual name) for other commands; before `exec`'s command it
            // would be dropped, so it is an unknown option there, as any other word starting with `-`.
            if optionsEnded || (argument == "-" && commandName != "exec") || !argument.hasPrefix("-") {
                if commandName == nil {
                    commandName = rawArguments[index - 1].validText ?? rawArguments[index - 1].escaped
                } else {
                    positionals.append(rawArguments[index - 1])
                }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                if commandName == "exec" {
                    commandArguments = Array(rawArguments[index...])
                    break
                }
                continue
            }
            let (name, inlineValue) = try splitOption(rawArguments[index - 1], command: commandName)
            guard let spec = options[name] else {
                throw .usage("unknown option \(rawArguments[index - 1].escaped)", command: commandName)
            }
            // A global option's mistake is shown with the global usage, whatever the command.
            let usageTopic = spec.isGlobal ? nil : commandName
            var value = inlineValue
            if spec.takesValue, value == nil {
                // `--ttl -- echo hi`: the next word is an option or `--`, not the value the user forgot.
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw .usage("option --\(name) needs a value", command: usageTopic)
                }
                value = rawArguments[index]
                index += 1
            } else if !spec.takesValue, value != nil {
                throw .usage("option --\(name) takes no value", command: usageTopic)
            }
            given.append((name, value))
        }

        return try build(
            commandName: commandName, positionals: positionals, options: given,
            commandArguments: commandArguments)
    }

    /// Refuses `--ttl 10 minutes -- CMD`: the shell split a duration into two words, and the unit word would
    /// otherwise run as the command.
    ///
    /// - Parameters:
    ///   - option: The last option given before the command, if any.
    ///   - unitWord: The word that would start the command.
    ///   - rest: The arguments after it; a `--` among them shows the user meant the command to start later.
    /// - Throws: `CLIFailure.usage` with the spelling that works.
    private static func rejectSplitDuration(
        _ option: (name: String, value: ByteString?)?, unitWord: String, rest: ArraySlice<String>
    ) throws(CLIFailure) {
        guard let option, option.name == "ttl" || option.name == "stale",
            let number = option.value?.lossyText, Double(number) != nil,
            let unit = Units.durationUnit(named: unitWord), rest.contains("--")
        else { return }
        throw .usage(
            "\"\(unitWord)\" after --\(option.name) \(number) would run as the command; "
                + "did you mean --\(option.name) \(number)\(unit)?",
            command: "exec")
    }

    /// Refuses `strata exec echo hi --ttl 1h`: without `--`, everything after the command is the command's,
    /// so an option of `strata` written there would silently become one of its arguments (and part of the
    /// key). A word counts when it is `--NAME` or `--NAME=VALUE` for a name in ``execOptionNames``.
    ///
    /// - Parameters:
    ///   - program: The word that starts the command.
    ///   - rest: The words after it.
    /// - Throws: `CLIFailure.usage` saying to put `--` before the command.
    private static func rejectOptionAfterCommand(_ program: String, rest: ArraySlice<String>) throws(CLIFailure) {
        for word in rest where word.hasPrefix("--") {
            let name = String(word.dropFirst(2).prefix { $0 != "=" })
            guard execOptionNames.contains(name) else { continue }
            throw .usage(
                "--\(name) comes after the command '\(program)', so it would be passed to the command rather than "
                    + "read by strata; put -- before the command (strata exec [OPTIONS] -- CMD [ARG...])",
                command: "exec")
        }
    }

    private static func splitOption(
        _ argument: ByteString, command: String?
    ) throws(CLIFailure) -> (String, ByteString?) {
        let text = argument.lossyText
        if let long = shortOptions[text] { return (long, nil) }
        guard text.hasPrefix("--") else {
            throw .usage(
                "unknown option \(argument.escaped) (options start with --; use -- before a value that starts with -)",
                command: command)
        }
        let body = argument.bytes.dropFirst(2)
        if let equals = body.firstIndex(of: UInt8(ascii: "=")) {
            return (String(decoding: body[..<equals], as: UTF8.self), ByteString(Array(body[(equals + 1)...])))
        }
        return (String(decoding: body, as: UTF8.self), nil)
    }

    // MARK: - Building the invocation

    private static func build(
        commandName: String?,
        positionals: [ByteString],
        options: [(name: String, value: ByteString?)],
        commandArguments: [ByteString]?
    ) throws(CLIFailure) -> Invocation {
        var globals = GlobalOptions()
        var exec = ExecOptions()
        var timeToLive: TimeInterval?
        var json = false
        var wantsHelp = false
        var wantsVersion = false
        var tags: [String] = []

        if let commandName, !commandNames.contains(commandName) {
            throw .usage("unknown command '\(commandName)'", command: nil)
        }
        for (name, value) in options {
            if case .commands(let allowed) = Self.options[name]?.scope, !allowed.contains(commandName ?? "") {
                throw .usage(
                    "option --\(name) does not apply to \(commandName.map { "'\($0)'" } ?? "this command")",
                    command: commandName)
            }
            let usageTopic = Self.options[name]?.isGlobal == true ? nil : commandName
            guard let text = (value ?? ByteString("")).validText else {
                throw .usage(
                    "option --\(name) has a value that is not valid UTF-8: \(value?.escaped ?? "")", command: usageTopic
                )
            }
            switch name {
            case "store":
                guard !text.isEmpty else { throw .usage("option --store needs a folder", command: nil) }
                globals.storePath = text
            case "redis":
                guard !text.isEmpty else { throw .usage("option --redis needs a URL", command: nil) }
                globals.redisURL = text
            case "redis-ca-file", "redis-client-cert", "redis-client-key":
                guard !text.isEmpty else { throw .usage("option --\(name) needs a file", command: nil) }
                globals.redisFiles[name] = text
            case "redis-connect-timeout", "redis-timeout":
                globals.redisDeadlines[name] = try unit(name, nil, text) { () throws(UnitError) in
                    try Units.duration(text)
                }
            case "max-size":
                globals.maxBytes = try unit(name, nil, text) { () throws(UnitError) in try Units.size(text) }
            case "max-entries":
                globals.maxEntries = try unit(name, nil, text) { () throws(UnitError) in try Units.count(text) }
            case "max-output":
                exec.outputLimit = try unit(name, commandName, text) { () throws(UnitError) in try Units.size(text) }
                exec.hasOutputLimit = true
            case "help": wantsHelp = true
            case "version": wantsVersion = true
            case "background-refresh": globals.isBackgroundRefresh = true
            case "ttl":
                timeToLive = try unit(name, commandName, text) { () throws(UnitError) in try Units.duration(text) }
            case "json": json = true
            case "key-env":
                guard !text.isEmpty, !text.contains("=") else {
                    throw .usage("option --key-env needs a variable name without '='", command: commandName)
                }
                exec.keyEnvironment.append(text)
            case "cache-failures": exec.cachesFailures = true
            case "key-cwd":
                exec.directory = try ExecDirectory(option: text)
            case "lease":
                let lease = try unit(name, commandName, text) { () throws(UnitError) in try Units.duration(text) }
                guard lease > 0 else { throw .usage("option --lease needs a positive duration", command: commandName) }
                exec.leaseDuration = lease
            case "stale":
                exec.staleWindow = try unit(name, commandName, text) { () throws(UnitError) in try Units.duration(text)
                }
            case "tag":
                guard !text.isEmpty else { throw .usage("option --tag needs a non-empty tag", command: commandName) }
                tags.append(text)
            default: throw .usage("unknown option --\(name)", command: commandName)
            }
        }

        if wantsHelp { return Invocation(globals: globals, command: .help(command: commandName)) }
        if wantsVersion { return Invocation(globals: globals, command: .version) }
        guard let commandName else { throw .usage("missing command", command: nil) }

        var execWithTags = exec
        execWithTags.tags = Set(tags)
        let command = try makeCommand(
            commandName, positionals: positionals, timeToLive: timeToLive, json: json, exec: execWithTags,
            commandArguments: commandArguments)
        return Invocation(globals: globals, command: command, tags: Set(tags))
    }

    /// Parses an option's value, naming the option and quoting the value in the message when it is bad.
    private static func unit<T>(
        _ name: String, _ command: String?, _ text: String, _ parse: () throws(UnitError) -> T
    ) throws(CLIFailure) -> T {
        do {
            return try parse()
        } catch {
            throw .usage("option --\(name) '\(text)' \(error.reason)", command: command)
        }
    }

    private static func makeCommand(
        _ name: String,
        positionals: [ByteString],
        timeToLive: TimeInterval?,
        json: Bool,
        exec: ExecOptions,
        commandArguments: [ByteString]?
    ) throws(CLIFailure) -> Command {
        func expect(_ range: ClosedRange<Int>, _ what: String) throws(CLIFailure) {
            if positionals.count < range.lowerBound { throw .usage("missing \(what)", command: name) }
            if positionals.count > range.upperBound {
                throw .usage("unexpected argument '\(positionals[range.upperBound].escaped)'", command: name)
            }
        }
        func key() throws(CLIFailure) -> String {
            // Keys are text (compared in Unicode NFC); a stray byte would otherwise be silently replaced.
            guard let key = positionals[0].validText else {
                throw .usage(
                    "the key '\(positionals[0].escaped)' is not valid UTF-8 (keys are text; values may be any bytes)",
                    command: name)
            }
            guard !key.isEmpty else { throw .usage("the key must not be empty", command: name) }
            return key
        }
        // `set` and `get` refuse `exec`'s namespace here, before any store or key is opened, so the mistake
        // is a usage error (2) whatever state the store or its key is in.
        func userKey() throws(CLIFailure) -> String {
            let key = try key()
            if key.hasPrefix(ExecKey.prefix) {
                throw .usage("keys starting with '\(ExecKey.prefix)' are reserved for exec", command: name)
            }
            return key
        }
        switch name {
        case "set":
            try expect(1...2, "key")
            let value = positionals.count > 1 ? Data(positionals[1].bytes) : nil
            return .set(key: try userKey(), value: value, timeToLive: timeToLive)
        case "get":
            try expect(1...1, "key")
            return .get(key: try userKey())
        case "rm" where !exec.tags.isEmpty:
            // `rm --tag T`: every entry carrying T; a key as well would make "which entries" ambiguous.
            if !positionals.isEmpty { throw .usage("rm takes a KEY or --tag, not both", command: name) }
            return .removeTagged
        case "rm":
            try expect(1...1, "key")
            return .remove(key: try key())
        case "clear":
            try expect(0...0, "")
            return .clear
        case "ls":
            try expect(0...0, "")
            return .list(json: json)
        case "stats":
            try expect(0...0, "")
            return .stats(json: json)
        case "trim":
            try expect(0...0, "")
            return .trim
        case "verify":
            try expect(0...0, "")
            return .verify
        case "migrate":
            try expect(0...0, "")
            return .migrate
        case "completion":
            try expect(1...1, "shell (bash, zsh or fish)")
            let shell = positionals[0].validText ?? positionals[0].escaped
            // One line, no usage: the command line is right but for the one word, and the line names the fix.
            guard completionShells.contains(shell) else {
                throw .badSetting("no completion for the shell '\(shell)'; strata completion bash|zsh|fish")
            }
            return .completion(shell: shell)
        case "help":
            try expect(0...1, "")
            let topic = positionals.first.map { $0.validText ?? $0.escaped }
            if let topic, !commandNames.contains(topic) {
                throw .usage("no help for unknown command '\(topic)'", command: nil)
            }
            return .help(command: topic)
        default:  // "exec"
            guard let commandArguments, let program = commandArguments.first, !program.bytes.isEmpty else {
                throw .usage("missing the command to run after --", command: name)
            }
            if exec.staleWindow != nil, timeToLive == nil {
                throw .usage("option --stale needs --ttl (a result without a TTL never goes stale)", command: name)
            }
            var options = exec
            options.timeToLive = timeToLive
            options.arguments = commandArguments
            return .exec(options)
        }
    }
}
