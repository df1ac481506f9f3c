/// A command to send to a Redis server: its name and arguments, each a binary-safe string.
///
/// RESP3 sends every command as an array of bulk strings, whatever protocol version the connection
/// speaks (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md, "Client
/// handshake" and RESP2's "Sending commands to a Redis server").
///
/// ```swift
/// let command = RESPCommand("SET", "greeting", "hello", "PX", "60000")
/// ```
///
/// Thread safety: a value type; `Sendable`.
package struct RESPCommand: Sendable, Equatable {
    /// The command name followed by its arguments.
    package var arguments: [[UInt8]]

    /// Creates a command from raw byte arguments.
    ///
    /// - Parameter arguments: The name, then each argument; each is sent as one bulk string.
    package init(arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// Creates a command from text arguments, each sent as its UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - name: The command name, such as `GET`.
    ///   - arguments: The arguments.
    package init(_ name: String, _ arguments: String...) {
        self.arguments = [Array(name.utf8)] + arguments.map { Array($0.utf8) }
    }

    /// `MGET` as bytes, made once: the tier's every read starts with it.
    package static let mget = Array("MGET".utf8)

    /// Appends one argument.
    ///
    /// - Parameter argument: The bytes to send as the next bulk string.
    package mutating func append(_ argument: [UInt8]) {
        arguments.append(argument)
    }

    /// Appends one text argument as its UTF-8 bytes.
    ///
    /// - Parameter argument: The text to send as the next bulk string.
    package mutating func append(_ argument: String) {
        arguments.append(Array(argument.utf8))
    }
}
