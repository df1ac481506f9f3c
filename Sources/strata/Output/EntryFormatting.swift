import DiskCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        let objects = entries.map { entry -> JSONValue in
            var object: [String: JSONValue] = [
                "key": .string(entry.key),
                "kind": .string("value"),
                "size": .integer(entry.size),
                "expiresAt": entry.expiresAt.map { .string(timestamp($0)) } ?? .null,
                "lastAccess": .string(timestamp(entry.lastAccess)),
                "tags": .array(entry.tags.sorted().map(JSONValue.string)),
            ]
            if let exec = ExecKey(storeKey: entry.key) {
                object["kind"] = .string("exec")
                object["argv"] = .array(exec.arguments.map(jsonValue))
                object["cwd"] = exec.directory.map(jsonValue) ?? .null
                object["env"] = .object(exec.environment.mapValues { $0.map(jsonValue) ?? .null })
            }
            return .object(object)
        }
        return JSONText.render(.array(objects))
    }

    /// A JSON string for valid UTF-8; otherwise `{"base64": …}` holding the exact bytes, since a JSON
    /// string cannot carry a byte that is not part of a character.
    private static func jsonValue(_ text: ByteString) -> JSONValue {
        text.validText.map(JSONValue.string) ?? .object(["base64": .string(Data(text.bytes).base64EncodedString())])
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

    /// `2026-11-30T02:26:41Z`: ISO 8601 in UTC, whole seconds (what `ISO8601DateFormatter` wrote before; the
    /// format style is FoundationEssentials', the formatter Foundation proper's).
    private static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
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
            return "'" + text.lossyText.replacing("'", with: "'\\''") + "'"
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

/// A JSON value the tool prints (`ls --json`, `stats --json`).
enum JSONValue {
    case string(String)
    case integer(Int)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])
}

/// Pretty, key-sorted JSON in the layout `JSONSerialization` wrote before (`[.prettyPrinted, .sortedKeys,
/// .withoutEscapingSlashes]`, empty arrays and objects compacted to `[]` and `{}`): two-space indents,
/// `"key" : value`, integral numbers without a fraction, other numbers in Swift's shortest form.
///
/// Written here because `JSONSerialization` is Foundation proper, not FoundationEssentials: linking it would
/// load Foundation's internationalization (ICU) into every `strata get`.
enum JSONText {
    /// Renders `value` and a newline.
    static func render(_ value: JSONValue) -> String {
        var text = ""
        write(value, indent: 0, into: &text)
        return text + "\n"
    }

    private static func write(_ value: JSONValue, indent: Int, into text: inout String) {
        switch value {
        case .string(let string): writeString(string, into: &text)
        case .integer(let integer): text += String(integer)
        case .number(let number):
            if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
                text += String(Int(number))
            } else {
                text += number.description
            }
        case .bool(let bool): text += bool ? "true" : "false"
        case .null: text += "null"
        case .array(let items):
            guard !items.isEmpty else {
                text += "[]"
                return
            }
            text += "[\n"
            for (index, item) in items.enumerated() {
                text += String(repeating: " ", count: indent + 2)
                write(item, indent: indent + 2, into: &text)
                text += index == items.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            guard !members.isEmpty else {
                text += "{}"
                return
            }
            text += "{\n"
            let names = members.keys.sorted(by: precedes)
            for (index, name) in names.enumerated() {
                text += String(repeating: " ", count: indent + 2)
                writeString(name, into: &text)
                text += " : "
                write(members[name] ?? .null, indent: indent + 2, into: &text)
                text += index == names.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "}"
        }
    }

    /// A JSON string: `"` and `\` escaped, `\b \f \n \r \t`, other control characters as `\u00hh`; `/` and
    /// everything past ASCII as they are.
    private static func writeString(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// The order of object keys: `JSONSerialization`'s `.sortedKeys` (a numeric, case-insensitive comparison
    /// in the root locale, ties broken lowercase first) as far as ASCII names go — punctuation before digits
    /// before letters, runs of digits by value ("VAR2" before "VAR10"). The tool's own keys are fixed ASCII
    /// names; only `exec` entries' environment names come from users.
    static func precedes(_ left: String, _ right: String) -> Bool {
        let (leftUnits, rightUnits) = (collationUnits(left), collationUnits(right))
        for (a, b) in zip(leftUnits, rightUnits) where a != b {
            return a.rank != b.rank ? a.rank < b.rank : a.value < b.value
        }
        if leftUnits.count != rightUnits.count { return leftUnits.count < rightUnits.count }
        // Equal but for case: lowercase first, at the first difference.
        for (a, b) in zip(left.unicodeScalars, right.unicodeScalars) where a != b {
            let (aLower, bLower) = (a.properties.isLowercase, b.properties.isLowercase)
            return aLower != bLower ? aLower : a.value < b.value
        }
        return left.unicodeScalars.count < right.unicodeScalars.count
    }

    /// One unit of the key order: punctuation (rank 0, by code point), a run of digits (rank 1, by value), a
    /// letter (rank 2, case-folded), anything else (rank 3, by code point).
    private struct CollationUnit: Equatable {
        var rank: Int
        var value: UInt64
    }

    private static func collationUnits(_ string: String) -> [CollationUnit] {
        var units: [CollationUnit] = []
        var digits: UInt64?
        for scalar in string.unicodeScalars {
            if let digit = scalar.properties.numericType == .decimal && scalar.isASCII
                ? UInt64(scalar.value - 0x30) : nil
            {
                let (times, overflow) = (digits ?? 0).multipliedReportingOverflow(by: 10)
                digits = overflow ? UInt64.max : min(UInt64.max - digit, times) + digit
                continue
            }
            if let run = digits {
                units.append(CollationUnit(rank: 1, value: run))
                digits = nil
            }
            if scalar.isASCII, scalar.properties.isAlphabetic {
                units.append(CollationUnit(rank: 2, value: UInt64(scalar.value | 0x20)))
            } else if scalar.isASCII {
                units.append(CollationUnit(rank: 0, value: UInt64(scalar.value)))
            } else {
                units.append(CollationUnit(rank: 3, value: UInt64(scalar.value)))
            }
        }
        if let run = digits { units.append(CollationUnit(rank: 1, value: run)) }
        return units
    }
}
