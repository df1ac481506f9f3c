#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The store key of one `exec` invocation: the argument list, the working directory and the
/// environment variables named by `--key-env`, all as raw bytes.
///
/// The key is `exec:` followed by an object written in a fixed, JSON-like form —
/// `{"argv":["printf","%s","a b"],"cwd":"/tmp","env":{"LANG":"C","TZ":null}}` — so that:
/// - the argument vector is kept as a list (`printf '%s' "a b"` and `printf '%s' a b` differ);
/// - an unset variable (`null`) differs from an empty one (`""`);
/// - a well-formed UTF-8 character outside printable ASCII is escaped as `\uXXXX` (UTF-16), a byte that
///   is not part of well-formed UTF-8 as `\xHH`, and `"` and `\` as `\"` and `\\`; so the key is pure
///   ASCII, different byte strings never give the same key, and the store's Unicode normalization of
///   keys cannot merge two arguments that Swift would consider equal. (Keys of valid UTF-8 are exactly
///   those earlier versions wrote, so their results stay cached.)
/// - variables are sorted by name and deduplicated, so `--key-env A --key-env B` equals
///   `--key-env B --key-env A`.
///
/// DiskCache names files by a keyed hash of the key, so nothing of it is visible on disk.
struct ExecKey: Equatable {
    /// The namespace every exec key starts with; `set` and `get` refuse keys in it.
    static let prefix = "exec:"

    /// The command and its arguments.
    var arguments: [ByteString]
    /// The working directory (`getcwd`, so symbolic links are resolved), or with `--key-cwd relative:ROOT`
    /// the path below the root (`.` or `./PATH`); `nil` with `--key-cwd none`, which leaves the `cwd` field
    /// out of the key.
    var directory: ByteString?
    /// Each named variable's value, or `nil` when unset.
    var environment: [String: ByteString?]

    /// The key's text, `exec:{...}`.
    var storeKey: String {
        let argv = arguments.map(Self.quoted).joined(separator: ",")
        let env = environment.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }).map { name in
            let value = environment[name].flatMap { $0 }.map(Self.quoted) ?? "null"
            return "\(Self.quoted(ByteString(name))):\(value)"
        }
        let cwd = directory.map { ",\"cwd\":\(Self.quoted($0))" } ?? ""
        return "\(Self.prefix){\"argv\":[\(argv)]\(cwd),\"env\":{\(env.joined(separator: ","))}}"
    }

    /// A key for `arguments` run in the current directory with the named variables' raw values.
    ///
    /// - Parameters:
    ///   - arguments: The command and its arguments.
    ///   - variableNames: The `--key-env` names.
    ///   - directory: What of the working directory the key holds (`--key-cwd`).
    /// - Throws: `CLIFailure.store` when `directory` is `.absolute` and the working directory cannot be
    ///   determined.
    init(arguments: [ByteString], variableNames: [String], directory: ExecDirectory) throws(CLIFailure) {
        self.arguments = arguments
        switch directory {
        case .absolute: self.directory = try RawProcess.currentDirectory()
        case .none: self.directory = nil
        case .relative(let path): self.directory = path
        }
        var selected: [String: ByteString?] = [:]
        for name in variableNames { selected[name] = .some(RawProcess.environmentValue(name)) }
        self.environment = selected
    }

    /// A key from its parts.
    init(arguments: [ByteString], directory: ByteString?, environment: [String: ByteString?]) {
        self.arguments = arguments
        self.directory = directory
        self.environment = environment
    }

    /// Rebuilds a key from its store text, for `ls`.
    ///
    /// - Parameter storeKey: A key that starts with ``prefix``.
    /// - Returns: The key, or `nil` when the text is not an exec key this version wrote.
    init?(storeKey: String) {
        guard storeKey.hasPrefix(Self.prefix) else { return nil }
        var reader = ExecKeyReader(Array(storeKey.utf8.dropFirst(Self.prefix.count)))
        guard let key = reader.readKey() else { return nil }
        self = key
    }

    /// A quoted string literal with the escapes described on the type.
    static func quoted(_ text: ByteString) -> String {
        var result = "\""
        for piece in text.pieces {
            switch piece {
            case .invalid(let byte):
                result += ByteString.hexEscape(byte)
            case .scalar(let scalar):
                for unit in String(scalar).utf16 {
                    switch unit {
                    case 0x22: result += "\\\""
                    case 0x5C: result += "\\\\"
                    case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
                    default:
                        let hex = String(unit, radix: 16)
                        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    }
                }
            }
        }
        return result + "\""
    }
}
