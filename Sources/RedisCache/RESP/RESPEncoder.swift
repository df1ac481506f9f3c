/// Writes commands in the wire form a Redis server reads: an array of bulk strings.
///
/// `*<count>\r\n` followed by `$<length>\r\n<bytes>\r\n` per argument
/// (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md, "Blob string" and
/// "Array reply"). Stateless; thread-safe.
package enum RESPEncoder {
    /// Appends the wire form of `command` to `buffer`.
    ///
    /// - Parameters:
    ///   - command: The command to encode.
    ///   - buffer: The bytes to append to; several commands appended one after another are pipelined.
    /// - Complexity: O(n) in the total size of the arguments.
    package static func encode(_ command: RESPCommand, into buffer: inout [UInt8]) {
        buffer.reserveCapacity(buffer.count + 16 + command.arguments.reduce(0) { $0 + $1.count + 16 })
        buffer.append(UInt8(ascii: "*"))
        appendDecimal(command.arguments.count, to: &buffer)
        for argument in command.arguments {
            buffer.append(UInt8(ascii: "$"))
            appendDecimal(argument.count, to: &buffer)
            buffer.append(contentsOf: argument)
            buffer.append(contentsOf: [0x0D, 0x0A])
        }
    }

    /// The wire form of `command` on its own.
    ///
    /// - Parameter command: The command to encode.
    /// - Returns: The bytes to send.
    /// - Complexity: O(n) in the total size of the arguments.
    package static func encode(_ command: RESPCommand) -> [UInt8] {
        var buffer: [UInt8] = []
        encode(command, into: &buffer)
        return buffer
    }

    /// Appends `value`'s decimal digits and CRLF.
    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: Array(String(value).utf8))
        buffer.append(contentsOf: [0x0D, 0x0A])
    }
}
