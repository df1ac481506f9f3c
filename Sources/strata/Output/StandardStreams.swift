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

    /// Reads `descriptor` to its end, or until it has given more than `limit` bytes.
    ///
    /// A regular file is read into one buffer of its size. A pipe is read into a buffer that doubles
    /// with `realloc`, which neither zero-fills (untouched pages cost no memory) nor, for large blocks,
    /// copies (it remaps), so the peak stays close to the input's size.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to drain, usually 0 for stdin.
    ///   - limit: The most bytes to accept, `nil` for no limit.
    /// - Returns: Every byte read, or `nil` as soon as the input passed `limit` (the rest is not read).
    /// - Throws: `CLIFailure.store` when the read fails (for example stdin is a directory) or memory runs
    ///   out.
    static func readToEnd(_ descriptor: Int32, limit: Int?) throws(CLIFailure) -> Data? {
        var info = stat()
        let knownSize = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
        // One byte past the limit tells "exactly the limit" from "more".
        let cap = limit.map { $0 < Int.max ? $0 + 1 : $0 } ?? Int.max
        var capacity = max(min(knownSize + 1, cap), 64 * 1024)
        guard var base = malloc(capacity) else { throw outOfMemory(capacity) }
        var count = 0
        while true {
            if count == capacity {
                guard count < cap else {
                    free(base)
                    return nil
                }
                capacity = min(capacity * 2, cap)
                guard let grown = realloc(base, capacity) else {
                    free(base)
                    throw outOfMemory(capacity)
                }
                base = grown
            }
            let got = systemRead(descriptor, base + count, capacity - count)
            if got < 0 {
                if errno == EINTR { continue }
                let code = errno
                free(base)
                throw .store("cannot read standard input: \(String(cString: strerror(code)))")
            }
            if got == 0 { break }
            count += got
            if count >= cap {
                free(base)
                return nil
            }
        }
        if count == 0 {
            free(base)
            return Data()
        }
        // Give back the unused tail (realloc shrinks in place).
        let fitted = realloc(base, count) ?? base
        return Data(bytesNoCopy: fitted, count: count, deallocator: .free)
    }

    private static func outOfMemory(_ bytes: Int) -> CLIFailure {
        .store("cannot read standard input: out of memory for \(bytes) bytes")
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
