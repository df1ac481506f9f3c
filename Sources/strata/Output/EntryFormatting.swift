import DiskCache
import Foundation

/// Renders `ls` output.
///
/// Text: one line per entry, `SIZE  EXPIRES  KEY` — size in bytes right-aligned, expiry as an ISO 8601
/// UTC instant or `never`, then the key with control characters escaped so that every entry stays on
/// one line. An exec entry shows as `exec: CMD ARG… (in DIR; env NAME=VALUE…)` with shell quoting; a
/// tagged entry ends with `  [tags: T…]`.
/// JSON: an array of objects `{"key", "kind": "value"|"exec", "size", "expiresAt", "lastAccess", "tags"}`, and
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
            return "\(paddedSize)  \(paddedExpiry)  \(displayKey(entry.key))\(displayTags(entry.tags))\n"
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
                "tags": entry.tags.sorted(),
            ]
            if let exec = ExecKey(storeKey: entry.key) {
                object["kind"] = "exec"
                object["argv"] = exec.arguments.map(jsonValue)
                object["cwd"] = exec.directory.map(jsonValue) ?? NSNull()
                object["env"] = exec.environment.mapValues { $0.map(jsonValue) ?? NSNull() as Any }
            }
            return object
        }
        return JSONText.render(objects)
    }

    /// A JSON string for valid UTF-8; otherwise `{"base64": …}` holding the exact bytes, since a JSON
    /// string cannot carry a byte that is not part of a character.
    private static func jsonValue(_ text: ByteString) -> Any {
        text.validText ?? ["base64": Data(text.bytes).base64EncodedString()]
    }

    /// How a key reads in the text listing.
    static func displayKey(_ key: String) -> String {
        guard let exec = ExecKey(storeKey: key) else { return escaped(ByteString(key)) }
        // `--key-cwd none` keys no directory; a relative one reads `in ./sub`.
        var details = exec.directory.map { ["in \(escaped($0))"] } ?? []
        if !exec.environment.isEmpty {
            let pairs = exec.environment.keys.sorted().map { name in
                exec.environment[name].flatMap { $0 }.map { "\(name)=\(shellQuoted($0))" } ?? "\(name) unset"
            }
            details.append("env " + pairs.joined(separator: " "))
        }
        let command = "exec: \(exec.arguments.map(shellQuoted).joined(separator: " "))"
        return details.isEmpty ? command : "\(command) (\(details.joined(separator: "; ")))"
    }

    /// `  [tags: a 'b c']` after the key, the tags sorted and shell-quoted; empty for an untagged entry.
    static func displayTags(_ tags: Set<String>) -> String {
        guard !tags.isEmpty else { return "" }
        return "  [tags: \(tags.sorted().map { shellQuoted(ByteString($0)) }.joined(separator: " "))]"
    }

    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// Escapes control characters, backslashes and bytes that are not UTF-8 (`\xHH`) so that text stays
    /// on one line and different bytes never read the same.
    static func escaped(_ text: ByteString) -> String {
        text.pieces.map { escape($0, quote: nil) { "\\u{\(String($0.value, radix: 16))}" } }.joined()
    }

    /// The longest text from outside `strata` (a server's error message) that a line shows, in characters
    /// after escaping.
    static let outsideTextLimit = 200

    /// Text from outside `strata` (a server's error message) made safe for a terminal: escaped as
    /// ``escaped(_:)``, and cut after ``outsideTextLimit`` characters with `…` when longer.
    static func outsideText(_ text: String) -> String {
        let shown = escaped(ByteString(text))
        guard shown.count > outsideTextLimit else { return shown }
        return String(shown.prefix(outsideTextLimit)) + "…"
    }

    /// Whether a scalar is shown as an escape rather than itself: the C0 and C1 control characters and DEL,
    /// the line and paragraph separators, and the bidirectional marks, embeddings, overrides and isolates,
    /// each of which could break a listing's line, drive the terminal, or reorder what is shown.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E...0x200F, 0x2028...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// One piece of text with backslash escapes: `\xHH` for a byte that is not UTF-8, `\n`, `\t`, `\r`,
    /// `\\`, `\` before `quote`, and `control` for any other control character.
    private static func escape(
        _ piece: ByteString.Piece, quote: Unicode.Scalar?, control: (Unicode.Scalar) -> String
    ) -> String {
        switch piece {
        case .invalid(let byte): return ByteString.hexEscape(byte)
        case .scalar("\n"): return "\\n"
        case .scalar("\t"): return "\\t"
        case .scalar("\r"): return "\\r"
        case .scalar("\\"): return "\\\\"
        case .scalar(let scalar) where scalar == quote: return "\\" + String(scalar)
        case .scalar(let scalar):
            return isHidden(scalar) ? control(scalar) : String(scalar)
        }
    }

    /// Quotes an argument for display the way a shell would read it back: bare when safe, in single
    /// quotes when it is printable UTF-8, otherwise in ANSI-C quotes (`$'…'`, read by bash, zsh and ksh)
    /// with `\xHH` for bytes that are not UTF-8 and for ASCII control characters, `\uHHHH` for the other
    /// hidden characters (``isHidden(_:)``).
    private static func shellQuoted(_ text: ByteString) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%".utf8)
        if !text.bytes.isEmpty, text.bytes.allSatisfy({ safe.contains($0) }) { return text.lossyText }
        let pieces = text.pieces
        let needsEscapes = pieces.contains { piece in
            guard case .scalar(let scalar) = piece else { return true }
            return isHidden(scalar)
        }
        guard needsEscapes else {
            return "'" + text.lossyText.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        // ANSI-C quotes read `\xHH` as one byte, so a scalar past ASCII is written `\uHHHH` instead.
        let body = pieces.map { piece in
            escape(piece, quote: "'") { scalar in
                guard scalar.value > 0x7F else { return ByteString.hexEscape(UInt8(scalar.value)) }
                let hex = String(scalar.value, radix: 16)
                return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
        return "$'" + body.joined() + "'"
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
        // The pretty printer writes an empty object or array as a brace, a blank line and a brace.
        let compacted = text.replacingOccurrences(
            of: "([\\[{])\\n\\s*\\n\\s*([\\]}])", with: "$1$2", options: .regularExpression)
        return compacted + "\n"
    }
}
