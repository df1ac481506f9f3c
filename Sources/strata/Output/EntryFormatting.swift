import DiskCache
import Foundation

/// Renders `ls` output.
///
/// Text: one line per entry, `SIZE  EXPIRES  KEY` — size in bytes right-aligned, expiry as an ISO 8601
/// UTC instant or `never`, then the key with control characters escaped so that every entry stays on
/// one line. An exec entry shows as `exec: CMD ARG… (in DIR; env NAME=VALUE…)` with shell quoting.
/// JSON: an array of objects `{"key", "kind": "value"|"exec", "size", "expiresAt", "lastAccess"}`, and
/// for exec entries `"argv"`, `"cwd"`, `"env"` as well.
enum EntryFormatting {
    /// The text listing.
    ///
    /// - Parameter entries: The entries, already sorted.
    /// - Returns: One line per entry; empty for an empty store.
    static func text(_ entries: [DiskCacheEntryInfo<String>]) -> String {
        entries.map { entry in
            let size = String(entry.size)
            let paddedSize = String(repeating: " ", count: max(0, 12 - size.count)) + size
            let expiry = entry.expiresAt.map(timestamp) ?? "never"
            let paddedExpiry = expiry + String(repeating: " ", count: max(0, 20 - expiry.count))
            return "\(paddedSize)  \(paddedExpiry)  \(displayKey(entry.key))\n"
        }.joined()
    }

    /// The JSON listing.
    ///
    /// - Parameter entries: The entries, already sorted.
    /// - Returns: A pretty-printed JSON array and a newline.
    static func json(_ entries: [DiskCacheEntryInfo<String>]) -> String {
        let objects = entries.map { entry -> [String: Any] in
            var object: [String: Any] = [
                "key": entry.key,
                "kind": "value",
                "size": entry.size,
                "expiresAt": entry.expiresAt.map(timestamp) ?? NSNull(),
                "lastAccess": timestamp(entry.lastAccess),
            ]
            if let exec = ExecKey(storeKey: entry.key) {
                object["kind"] = "exec"
                object["argv"] = exec.arguments
                object["cwd"] = exec.directory
                object["env"] = exec.environment.mapValues { $0 ?? NSNull() as Any }
            }
            return object
        }
        return JSONText.render(objects)
    }

    /// How a key reads in the text listing.
    static func displayKey(_ key: String) -> String {
        guard let exec = ExecKey(storeKey: key) else { return escaped(key) }
        var details = ["in \(escaped(exec.directory))"]
        if !exec.environment.isEmpty {
            let pairs = exec.environment.keys.sorted().map { name in
                exec.environment[name].flatMap { $0 }.map { "\(name)=\(shellQuoted($0))" } ?? "\(name) unset"
            }
            details.append("env " + pairs.joined(separator: " "))
        }
        return "exec: \(exec.arguments.map(shellQuoted).joined(separator: " ")) (\(details.joined(separator: "; ")))"
    }

    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// Escapes control characters (and, unless `keepsBackslashes`, backslashes) so text stays on one line.
    private static func escaped(_ text: String, keepsBackslashes: Bool = false) -> String {
        text.unicodeScalars.map { scalar in
            switch scalar {
            case "\n": return "\\n"
            case "\t": return "\\t"
            case "\r": return "\\r"
            case "\\" where !keepsBackslashes: return "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    return "\\u{\(String(scalar.value, radix: 16))}"
                }
                return String(scalar)
            }
        }.joined()
    }

    /// Quotes an argument for display the way a POSIX shell would read it back (backslashes are literal
    /// inside single quotes; control characters are shown escaped, so use `--json` for exact bytes).
    private static func shellQuoted(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%")
        if !text.isEmpty, text.allSatisfy({ safe.contains($0) }) { return text }
        return "'" + escaped(text, keepsBackslashes: true).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Pretty, key-sorted JSON through `JSONSerialization`, which writes `null` for `NSNull`.
enum JSONText {
    /// Renders `object`, a tree of arrays, dictionaries, strings, numbers, booleans and `NSNull`.
    ///
    /// - Parameter object: The value to render.
    /// - Returns: The JSON text and a newline; `null` if the object cannot be rendered.
    static func render(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
            let text = String(data: data, encoding: .utf8)
        else { return "null\n" }
        return text + "\n"
    }
}
