#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes handed over by the operating system — an argument, an environment value, a path — kept
/// exactly as given.
///
/// `CommandLine.arguments`, `ProcessInfo.environment` and `FileManager.currentDirectoryPath` decode
/// these as UTF-8 and replace every invalid byte with U+FFFD, so `$'\xff'` and `$'\xfe'` would become
/// one string. The tool reads the raw bytes instead (`CommandLine.unsafeArgv`, `getenv`, `getcwd`) and
/// decodes only where text is required.
struct ByteString: Hashable {
    /// The bytes, without a terminating NUL.
    var bytes: [UInt8]

    /// Wraps `bytes`.
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The UTF-8 bytes of `text`.
    init(_ text: String) { self.bytes = Array(text.utf8) }

    /// Copies a NUL-terminated C string.
    init(cString: UnsafePointer<CChar>) {
        self.bytes = Array(UnsafeBufferPointer(start: cString, count: strlen(cString))).map {
            UInt8(bitPattern: $0)
        }
    }

    /// The text, when the bytes are valid UTF-8; `nil` otherwise.
    var validText: String? { Self.validUTF8(bytes[...]) }

    /// The text of `bytes` when they are valid UTF-8, `nil` otherwise.
    ///
    /// `String(validating:as:)` needs macOS 15 and iOS 18, newer than the package's minimums, so this decodes
    /// with repair and keeps the result only when it re-encodes to the same bytes: a repair always changes
    /// them (an invalid sequence becomes U+FFFD's three bytes), a valid input never does.
    ///
    /// - Complexity: O(n) in the byte count.
    static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// The text with each invalid byte replaced by U+FFFD: for matching option names and for messages
    /// that also show ``escaped``.
    var lossyText: String { String(decoding: bytes, as: UTF8.self) }

    /// The text with each byte that is not part of valid UTF-8 written as `\xHH` and each backslash as
    /// `\\`, so that different byte strings always read differently.
    var escaped: String {
        pieces.map { piece in
            switch piece {
            case .scalar("\\"): return "\\\\"
            case .scalar(let scalar): return String(scalar)
            case .invalid(let byte): return Self.hexEscape(byte)
            }
        }.joined()
    }

    /// One decoded part of the bytes.
    enum Piece: Equatable {
        /// A well-formed UTF-8 sequence.
        case scalar(Unicode.Scalar)
        /// A byte that does not start a well-formed sequence.
        case invalid(UInt8)
    }

    /// The bytes split into Unicode scalars and stray bytes, in order.
    ///
    /// - Complexity: O(n) in the byte count.
    var pieces: [Piece] {
        if let text = validText { return text.unicodeScalars.map { .scalar($0) } }
        var result: [Piece] = []
        var index = 0
        while index < bytes.count {
            var matched = false
            // A well-formed sequence has exactly one length (1 to 4) that decodes as a single scalar.
            for length in 1...4 where index + length <= bytes.count {
                if let text = Self.validUTF8(bytes[index..<(index + length)]),
                    let scalar = text.unicodeScalars.first, text.unicodeScalars.count == 1
                {
                    result.append(.scalar(scalar))
                    index += length
                    matched = true
                    break
                }
            }
            if !matched {
                result.append(.invalid(bytes[index]))
                index += 1
            }
        }
        return result
    }

    /// `\xHH` with two lower-case hex digits.
    static func hexEscape(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16)
        return "\\x" + (byte < 16 ? "0" : "") + hex
    }

    /// Calls `body` with a NUL-terminated copy of the bytes.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        defer { pointer.deallocate() }
        for (offset, byte) in bytes.enumerated() { pointer[offset] = CChar(bitPattern: byte) }
        pointer[bytes.count] = 0
        return try body(pointer)
    }
}

/// Raw views of the process's arguments, environment and working directory.
enum RawProcess {
    /// The argument vector after the program name, byte for byte.
    static var arguments: [ByteString] {
        (1..<Int(CommandLine.argc)).compactMap { index in
            CommandLine.unsafeArgv[index].map { ByteString(cString: $0) }
        }
    }

    /// The program name as invoked (`argv[0]`).
    static var programName: ByteString {
        guard CommandLine.argc > 0, let name = CommandLine.unsafeArgv[0] else { return ByteString("strata") }
        return ByteString(cString: name)
    }

    /// This executable's path: `/proc/self/exe` resolved where FoundationEssentials stands in for Foundation
    /// (Linux; what `Bundle.main.executablePath` reads there, but `Bundle` is Foundation proper), else
    /// `Bundle.main.executablePath`; `nil` when unknown.
    static var executablePath: ByteString? {
        #if canImport(FoundationEssentials)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return ByteString(buffer.prefix(length).map { UInt8(bitPattern: $0) })
        #else
        return Bundle.main.executablePath.map { ByteString($0) }
        #endif
    }

    /// The variables the tool reads: its own settings and the ones the library derives the store's and
    /// the key's folders from. A command's `--env` selection reads its variables itself
    /// (``environmentValue(_:)``), byte for byte.
    static let variableNames = [
        "STRATA_CLOCK_OFFSET", "STRATA_MASTER_KEY", "STRATA_PROGRESS_DELAY", "STRATA_REDIS_CA_FILE",
        "STRATA_REDIS_CLIENT_CERT", "STRATA_REDIS_CLIENT_KEY", "STRATA_REDIS_CONNECT_TIMEOUT", "STRATA_REDIS_TIMEOUT",
        "STRATA_REDIS_URL", "STRATA_WAIT_NOTICE_DELAY", "XDG_CACHE_HOME", "XDG_DATA_HOME", "HOME",
    ]

    /// ``variableNames`` that are set, with their values as `getenv(3)` gives them (bytes that are not UTF-8
    /// repaired).
    ///
    /// Looked up by name rather than through `ProcessInfo.environment`, which on Linux splits every entry
    /// of the environment through generic `String` indexing: 1.2 million instructions for 41 variables, a
    /// twentieth of a whole `strata get` (callgrind, Docs/Performance.md).
    static var environment: [String: String] {
        var variables: [String: String] = [:]
        for name in variableNames {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }

    /// The value of environment variable `name`, byte for byte, or `nil` when it is unset.
    static func environmentValue(_ name: String) -> ByteString? {
        getenv(name).map { ByteString(cString: $0) }
    }

    /// The working directory as `getcwd(3)` reports it (symbolic links resolved), byte for byte.
    ///
    /// - Throws: `CLIFailure.store` when it cannot be determined (it was deleted, or a folder above it
    ///   cannot be searched): a key holding an empty directory would let every such directory share one
    ///   result.
    static func currentDirectory() throws(CLIFailure) -> ByteString {
        var capacity = Int(PATH_MAX) + 1
        var code = ERANGE
        while capacity <= 1 << 20 {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
            defer { buffer.deallocate() }
            if getcwd(buffer, capacity) != nil { return ByteString(cString: buffer) }
            code = errno
            guard code == ERANGE else { break }
            capacity *= 2
        }
        throw .store(
            "cannot determine the working directory (\(String(cString: strerror(code)))); run from an existing "
                + "directory, or key with --key-cwd none")
    }
}
