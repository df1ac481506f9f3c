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
        // Grow geometrically: `reserveCapacity` allocates exactly what it is asked for, so reserving a little
        // more for every command appended to one pipelined buffer would copy the buffer each time.
        var needed = buffer.count + 16
        for argument in command.arguments { needed += argument.count + 16 }
        if buffer.capacity < needed { buffer.reserveCapacity(max(needed, buffer.capacity * 2)) }
        buffer.append(UInt8(ascii: "*"))
        appendDecimal(command.arguments.count, to: &buffer)
        for argument in command.arguments {
            buffer.append(UInt8(ascii: "$"))
            appendDecimal(argument.count, to: &buffer)
            buffer.append(contentsOf: argument)
            buffer.append(0x0D)
            buffer.append(0x0A)
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

    /// Appends a non-negative count in decimal and CRLF, digit by digit: no `String` is made per number
    /// (this runs for every argument of every request).
    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        repeat {
            buffer.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor))
            rest %= divisor
            divisor /= 10
        } while divisor > 0
        buffer.append(0x0D)
        buffer.append(0x0A)
    }
}
