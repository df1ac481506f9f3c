import Foundation

/// The store key of one `exec` invocation: the argument list, the working directory and the
/// environment variables named by `--key-env`.
///
/// The key is `exec:` followed by a JSON object written by hand in a fixed form —
/// `{"argv":["printf","%s","a b"],"cwd":"/tmp","env":{"LANG":"C","TZ":null}}` — so that:
/// - the argument vector is kept as a list (`printf '%s' "a b"` and `printf '%s' a b` differ);
/// - an unset variable (`null`) differs from an empty one (`""`);
/// - every character outside printable ASCII is escaped as `\uXXXX` (UTF-16), so the key is pure
///   ASCII and the store's Unicode normalization of keys cannot merge two different argument byte
///   strings that Swift would consider equal;
/// - variables are sorted by name and deduplicated, so `--key-env A --key-env B` equals
///   `--key-env B --key-env A`.
///
/// DiskCache names files by a keyed hash of the key, so nothing of it is visible on disk.
struct ExecKey: Equatable {
    /// The namespace every exec key starts with; `set` and `get` refuse keys in it.
    static let prefix = "exec:"

    /// The command and its arguments.
    var arguments: [String]
    /// The working directory (`getcwd`, so symbolic links are resolved).
    var directory: String
    /// Each named variable's value, or `nil` when unset.
    var environment: [String: String?]

    /// The key's text, `exec:{...}`.
    var storeKey: String {
        let argv = arguments.map(Self.quoted).joined(separator: ",")
        let env = environment.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }).map { name in
            let value = environment[name].flatMap { $0 }.map(Self.quoted) ?? "null"
            return "\(Self.quoted(name)):\(value)"
        }
        return
            "\(Self.prefix){\"argv\":[\(argv)],\"cwd\":\(Self.quoted(directory)),\"env\":{\(env.joined(separator: ","))}}"
    }

    /// A key for `arguments` run in the current directory with the named variables.
    ///
    /// - Parameters:
    ///   - arguments: The command and its arguments.
    ///   - variableNames: The `--key-env` names.
    ///   - environment: The process environment.
    init(arguments: [String], variableNames: [String], environment: [String: String]) {
        self.arguments = arguments
        self.directory = FileManager.default.currentDirectoryPath
        var selected: [String: String?] = [:]
        for name in variableNames { selected[name] = .some(environment[name]) }
        self.environment = selected
    }

    /// Rebuilds a key from its store text, for `ls`.
    ///
    /// - Parameter storeKey: A key that starts with ``prefix``.
    /// - Returns: The key, or `nil` when the text is not an exec key this version wrote.
    init?(storeKey: String) {
        guard storeKey.hasPrefix(Self.prefix),
            let object = try? JSONSerialization.jsonObject(with: Data(storeKey.dropFirst(Self.prefix.count).utf8))
                as? [String: Any],
            let arguments = object["argv"] as? [String],
            let directory = object["cwd"] as? String,
            let environment = object["env"] as? [String: Any]
        else { return nil }
        self.arguments = arguments
        self.directory = directory
        self.environment = environment.mapValues { $0 as? String }
    }

    /// A JSON string literal with every character outside printable ASCII escaped.
    private static func quoted(_ text: String) -> String {
        var result = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return result + "\""
    }
}
