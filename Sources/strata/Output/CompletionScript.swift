/// The shell completion scripts `strata completion bash|zsh|fish` prints.
///
/// Each script is made from the parser's own tables (``ArgumentParser/commandNames`` and
/// ``ArgumentParser/optionNames(for:)``), so it offers exactly the commands and options the parser accepts,
/// per command. Values are completed where the set is known without opening the store: `--key-cwd`'s forms,
/// folders for `--store`, files for the `--redis-…` files, variable names for `--key-env`, and the shells
/// after `completion`. After `exec -- ` (or `exec`'s first word) the shell's own command completion takes
/// over. Keys and tags are not completed: listing them decrypts every entry's header (O(*n*) with the key),
/// a cost no key press should pay (Docs/CLI.md, "Completion").
///
/// Pure text: the caller prints it. Thread-safe.
enum CompletionScript {
    /// The script for `shell`.
    ///
    /// - Parameter shell: One of ``ArgumentParser/completionShells``.
    /// - Returns: The script, ending in a newline; the bash script for an unknown name (the parser refuses
    ///   those before this is called).
    /// - Complexity: O(*c* × *o*) for *c* commands and *o* options.
    static func script(for shell: String) -> String {
        switch shell {
        case "zsh": zsh
        case "fish": fish
        default: bash
        }
    }

    // MARK: - What the scripts share

    private static let commands = ArgumentParser.commandNames
    private static let directoryOptions = ["store"]
    private static let fileOptions = ["redis-ca-file", "redis-client-cert", "redis-client-key"]
    private static let keyDirectoryForms = "absolute none relative:"

    /// Every option that takes a value, as `--name` words.
    private static var valueOptions: [String] {
        Set(commands.flatMap { ArgumentParser.optionNames(for: $0) })
            .filter(ArgumentParser.takesValue).sorted().map { "--" + $0 }
    }

    /// Value options whose values are free text (a duration, a size, a tag): nothing is offered for them.
    private static var freeValueOptions: [String] {
        let completed = Set((directoryOptions + fileOptions + ["key-cwd", "key-env"]).map { "--" + $0 })
        return valueOptions.filter { !completed.contains($0) }
    }

    private static func options(_ command: String?) -> String {
        ArgumentParser.optionNames(for: command).map { "--" + $0 }.joined(separator: " ")
    }

    private static func patterns(_ names: [String]) -> String {
        names.joined(separator: "|")
    }

    // MARK: - bash

    private static var bash: String {
        let optionCases = commands.map { "        \($0)) words=\"\(options($0))\" ;;" }.joined(separator: "\n")
        return """
            # bash completion for strata. Load it with: source <(strata completion bash)
            _strata() {
                local cur="${COMP_WORDS[COMP_CWORD]}" prev="" command="" word words i
                (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
                # bash splits --opt=value at the "=": the word before "=" is the option.
                if [[ $prev == "=" ]] && (( COMP_CWORD > 1 )); then prev="${COMP_WORDS[COMP_CWORD-2]}"; fi
                for (( i = 1; i < COMP_CWORD; i++ )); do
                    word="${COMP_WORDS[i]}"
                    case "$word" in
                    --)
                        if [[ $command == exec ]]; then
                            if (( i + 1 == COMP_CWORD )); then
                                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
                            else
                                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                            fi
                            return
                        fi ;;
                    \(patterns(valueOptions)))
                        if [[ ${COMP_WORDS[i+1]} == "=" ]]; then (( i += 2 )); else (( i++ )); fi ;;
                    -*) ;;
                    *)
                        if [[ -z $command ]]; then
                            command="$word"
                        elif [[ $command == exec ]]; then
                            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                            return
                        fi ;;
                    esac
                done
                case "$prev" in
                \(patterns(directoryOptions.map { "--" + $0 }))) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
                \(patterns(fileOptions.map { "--" + $0 }))) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
                --key-cwd) mapfile -t COMPREPLY < <(compgen -W "\(keyDirectoryForms)" -- "$cur"); return ;;
                --key-env) mapfile -t COMPREPLY < <(compgen -v -- "$cur"); return ;;
                \(patterns(freeValueOptions))) return ;;
                esac
                if [[ $cur == -* ]]; then
                    case "$command" in
            \(optionCases)
                    *) words="\(options(nil))" ;;
                    esac
                    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
                    return
                fi
                case "$command" in
                ""|help) mapfile -t COMPREPLY < <(compgen -W "\(commands.joined(separator: " "))" -- "$cur") ;;
                completion) mapfile -t COMPREPLY < <(compgen -W "\(ArgumentParser.completionShells.joined(separator: " "))" -- "$cur") ;;
                exec) mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
                esac
            }
            complete -F _strata strata

            """
    }

    // MARK: - zsh

    private static var zsh: String {
        let optionCases = commands.map { "        \($0)) compadd -- \(options($0)) ;;" }.joined(separator: "\n")
        return """
            #compdef strata
            # zsh completion for strata. Save it as _strata in a folder on $fpath, or, after compinit:
            # source <(strata completion zsh)
            _strata() {
                local command="" word prev="${words[CURRENT-1]}"
                local -i i
                for (( i = 2; i < CURRENT; i++ )); do
                    word="${words[i]}"
                    case "$word" in
                    --)
                        if [[ $command == exec ]]; then
                            # The rest is a command line of its own: complete it as the shell would.
                            shift $i words
                            (( CURRENT -= i ))
                            _normal
                            return
                        fi ;;
                    \(patterns(valueOptions))) (( i++ )) ;;
                    -*) ;;
                    *)
                        if [[ -z $command ]]; then
                            command="$word"
                        elif [[ $command == exec ]]; then
                            _files
                            return
                        fi ;;
                    esac
                done
                case "$prev" in
                \(patterns(directoryOptions.map { "--" + $0 }))) _files -/; return ;;
                \(patterns(fileOptions.map { "--" + $0 }))) _files; return ;;
                --key-cwd) compadd -- \(keyDirectoryForms); return ;;
                --key-env) _parameters; return ;;
                \(patterns(freeValueOptions))) return 1 ;;
                esac
                if [[ $PREFIX == -* ]]; then
                    case "$command" in
            \(optionCases)
                    *) compadd -- \(options(nil)) ;;
                    esac
                    return
                fi
                case "$command" in
                ""|help) compadd -- \(commands.joined(separator: " ")) ;;
                completion) compadd -- \(ArgumentParser.completionShells.joined(separator: " ")) ;;
                exec) _command_names -e ;;
                esac
            }
            if [[ "${funcstack[1]}" == _strata ]]; then
                _strata "$@"
            else
                compdef _strata strata
            fi

            """
    }

    // MARK: - fish

    private static var fish: String {
        var lines = [
            "# fish completion for strata. Save it with: strata completion fish > ~/.config/fish/completions/strata.fish",
            "function __strata_command --description 'The strata command on the command line, if any'",
            "    set -l words (commandline -opc)",
            "    set -e words[1]",
            "    set -l skip 0",
            "    for word in $words",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $word",
            "            case \(valueOptions.joined(separator: " "))",
            "                set skip 1",
            "            case '-*'",
            "            case '*'",
            "                echo $word",
            "                return 0",
            "        end",
            "    end",
            "    return 1",
            "end",
            "function __strata_using --description 'Whether the strata command is the argument'",
            "    set -l command (__strata_command)",
            "    test \"$command\" = \"$argv[1]\"",
            "end",
            "complete -c strata -f",
            "complete -c strata -n 'not __strata_command >/dev/null' -a '\(commands.joined(separator: " "))'",
            "complete -c strata -n '__strata_using help' -a '\(commands.joined(separator: " "))'",
            "complete -c strata -n '__strata_using completion' -a '"
                + ArgumentParser.completionShells.joined(separator: " ") + "'",
            "complete -c strata -n '__strata_using exec' -a '(__fish_complete_command)'",
            "complete -c strata -s h -l help",
            "complete -c strata -s V -l version",
        ]
        let globals = Set(ArgumentParser.optionNames(for: nil))
        for name in globals.sorted() where name != "help" && name != "version" {
            lines.append("complete -c strata -l \(name)\(fishValue(name))")
        }
        for command in commands {
            for name in ArgumentParser.optionNames(for: command) where !globals.contains(name) {
                lines.append("complete -c strata -n '__strata_using \(command)' -l \(name)\(fishValue(name))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What fish offers after `--name`: nothing for a flag, else the option's value completion.
    private static func fishValue(_ name: String) -> String {
        guard ArgumentParser.takesValue(name) else { return "" }
        if directoryOptions.contains(name) { return " -x -a '(__fish_complete_directories)'" }
        if fileOptions.contains(name) { return " -r -F" }
        if name == "key-cwd" { return " -x -a '\(keyDirectoryForms)'" }
        if name == "key-env" { return " -x -a '(set -n)'" }
        return " -x"
    }
}
