#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads back the fixed form ``ExecKey/storeKey`` writes: `{"argv":[…],"cwd":…,"env":{…}}` (the `cwd`
/// field left out under `--key-cwd none`) with the
/// escapes `\"`, `\\`, `\uXXXX` (UTF-16, surrogate pairs joined) and `\xHH` (a raw byte).
///
/// Not a general JSON parser: anything but that exact shape is refused, so a key this version did not
/// write is simply not shown as an exec entry.
struct ExecKeyReader {
    private let text: [UInt8]
    private var offset = 0

    init(_ text: [UInt8]) { self.text = text }

    /// The key, or `nil` when the text is not in the fixed form.
    mutating func readKey() -> ExecKey? {
        guard expect("{\"argv\":[") else { return nil }
        var arguments: [ByteString] = []
        if !expect("]") {
            repeat {
                guard let argument = readString() else { return nil }
                arguments.append(argument)
            } while expect(",")
            guard expect("]") else { return nil }
        }
        var directory: ByteString?
        if expect(",\"cwd\":") {
            guard let read = readString() else { return nil }
            directory = read
        }
        guard expect(",\"env\":{") else { return nil }
        var environment: [String: ByteString?] = [:]
        if !expect("}") {
            repeat {
                guard let name = readString()?.validText, expect(":") else { return nil }
                if expect("null") {
                    environment[name] = .some(nil)
                } else {
                    guard let value = readString() else { return nil }
                    environment[name] = .some(value)
                }
            } while expect(",")
            guard expect("}") else { return nil }
        }
        guard expect("}"), offset == text.count else { return nil }
        return ExecKey(arguments: arguments, directory: directory, environment: environment)
    }

    private mutating func expect(_ literal: String) -> Bool {
        let bytes = Array(literal.utf8)
        guard text.count - offset >= bytes.count, Array(text[offset..<(offset + bytes.count)]) == bytes else {
            return false
        }
        offset += bytes.count
        return true
    }

    private mutating func readString() -> ByteString? {
        guard expect("\"") else { return nil }
        var bytes: [UInt8] = []
        var pendingHighSurrogate: UInt16?
        while offset < text.count {
            let byte = text[offset]
            offset += 1
            if byte == UInt8(ascii: "\"") {
                return pendingHighSurrogate == nil ? ByteString(bytes) : nil
            }
            guard byte == UInt8(ascii: "\\") else {
                guard pendingHighSurrogate == nil else { return nil }
                bytes.append(byte)
                continue
            }
            guard offset < text.count else { return nil }
            let escape = text[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                guard pendingHighSurrogate == nil else { return nil }
                bytes.append(escape)
            case UInt8(ascii: "x"):
                guard pendingHighSurrogate == nil, let value = readHex(digits: 2) else { return nil }
                bytes.append(UInt8(value))
            case UInt8(ascii: "u"):
                guard let unit = readHex(digits: 4).map(UInt16.init) else { return nil }
                if let high = pendingHighSurrogate {
                    guard UTF16.isTrailSurrogate(unit) else { return nil }
                    pendingHighSurrogate = nil
                    let value = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { return nil }
                    bytes.append(contentsOf: String(scalar).utf8)
                } else if UTF16.isLeadSurrogate(unit) {
                    pendingHighSurrogate = unit
                } else {
                    guard let scalar = Unicode.Scalar(unit) else { return nil }
                    bytes.append(contentsOf: String(scalar).utf8)
                }
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func readHex(digits: Int) -> UInt32? {
        guard text.count - offset >= digits,
            let value = UInt32(String(decoding: text[offset..<(offset + digits)], as: UTF8.self), radix: 16)
        else { return nil }
        offset += digits
        return value
    }
}
