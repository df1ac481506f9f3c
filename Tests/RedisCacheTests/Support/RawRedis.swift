import Foundation
import RedisCache
import RedisConnection

/// What a test sees through a plain connection, as an operator with `redis-cli` would.
struct RawRedis {
    let connection: RedisConnection

    init(port: Int) throws {
        connection = try RedisTesting.connection(port: port, readTimeout: .seconds(30), writeTimeout: .seconds(30))
    }

    func send(_ arguments: [[UInt8]]) async throws -> RESPValue {
        try await connection.send(RESPCommand(arguments: arguments))
    }

    func send(_ words: String...) async throws -> RESPValue {
        try await connection.send(RESPCommand(arguments: words.map { Array($0.utf8) }))
    }

    /// Every key the server holds, by `SCAN … COUNT 1000` (never `KEYS`).
    func allKeys() async throws -> [[UInt8]] {
        var cursor = "0"
        var keys: [[UInt8]] = []
        repeat {
            guard case .array(let parts) = try await send("SCAN", cursor, "COUNT", "1000"), parts.count == 2,
                let next = parts[0].string, case .array(let batch) = parts[1]
            else { throw RedisError(.protocolViolation, "unexpected SCAN reply") }
            for case .bulkString(let key) in batch { keys.append(key) }
            cursor = next
        } while cursor != "0"
        return keys
    }

    /// The bytes stored under `key`, or `nil`.
    func get(_ key: [UInt8]) async throws -> [UInt8]? {
        if case .bulkString(let bytes) = try await send([Array("GET".utf8), key]) { return bytes }
        return nil
    }

    /// `calls` of `command` from `INFO commandstats` (0 when the command never ran).
    func calls(of command: String) async throws -> Int {
        let text = try await send("INFO", "commandstats").string ?? ""
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_\(command.lowercased()):") {
            let field = line.split(separator: ",").first { $0.contains("calls=") }
            return Int(field?.split(separator: "=").last ?? "") ?? 0
        }
        return 0
    }

    /// Calls of every command but `INFO` in `INFO commandstats`, summed.
    func totalCalls() async throws -> Int {
        let text = try await send("INFO", "commandstats").string ?? ""
        return text.split(whereSeparator: \.isNewline).reduce(0) { sum, line in
            guard !line.hasPrefix("cmdstat_info:"),
                let field = line.split(separator: ",").first(where: { $0.contains("calls=") })
            else { return sum }
            return sum + (Int(field.split(separator: "=").last ?? "") ?? 0)
        }
    }
}

extension [UInt8] {
    /// Whether `needle` occurs anywhere in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { start in self[start..<start + needle.count].elementsEqual(needle)
        }
    }
}
