import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Raw, binary-safe access to the process's standard streams through `read(2)` and `write(2)`.
///
/// Foundation's `FileHandle` would do, but its failure modes differ between platforms (some versions
/// raise an Objective-C exception on `EPIPE`); the system calls return an error we can report.
enum StandardStreams {
    /// Writes all of `data` to `descriptor`, retrying short writes and `EINTR`.
    ///
    /// - Parameters:
    ///   - data: The bytes to write.
    ///   - descriptor: 1 for stdout, 2 for stderr, or any open descriptor.
    /// - Returns: `true` when every byte was written; `false` on an error such as `EPIPE`.
    @discardableResult
    static func write(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { buffer in
            guard var pointer = buffer.baseAddress else { return true }
            var remaining = buffer.count
            while remaining > 0 {
                let written = systemWrite(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                remaining -= written
                pointer = pointer.advanced(by: written)
            }
            return true
        }
    }

    /// Writes `text` as UTF-8 to stdout.
    ///
    /// - Parameter text: The text, usually ending in a newline.
    /// - Returns: `true` when every byte was written.
    @discardableResult
    static func printOutput(_ text: String) -> Bool {
        write(Data(text.utf8), to: STDOUT_FILENO)
    }

    /// Writes one message line to stderr (a newline is added).
    ///
    /// - Parameter text: The message.
    static func printError(_ text: String) {
        write(Data((text + "\n").utf8), to: STDERR_FILENO)
    }

    /// Reads `descriptor` to its end.
    ///
    /// - Parameter descriptor: The descriptor to drain, usually 0 for stdin.
    /// - Returns: Every byte read.
    /// - Throws: `CLIFailure.store` when the read fails (for example stdin is a directory).
    static func readToEnd(_ descriptor: Int32) throws(CLIFailure) -> Data {
        var result = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .store("cannot read standard input: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Whether `descriptor` is a terminal (`isatty(3)`).
    ///
    /// - Parameter descriptor: 0, 1, 2 or any open descriptor.
    /// - Returns: `true` for a terminal.
    static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }
}

/// `write(2)` under a name that does not clash with `StandardStreams.write`.
func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}

/// `read(2)` under a name that does not clash with Swift members called `read`.
func systemRead(_ descriptor: Int32, _ pointer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, pointer, count)
}
