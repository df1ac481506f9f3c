import Foundation

/// This process's open descriptors, read from `/proc/self/fd` (Linux only), for leak checks that other
/// tests running at the same time cannot disturb: sockets are matched by the server's port and the
/// connection's own local port.
enum Descriptors {
    /// The link target of every open descriptor (`socket:[inode]`, `pipe:[inode]`, a path).
    static func targets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { target(of: Int32($0) ?? -1) }
    }

    /// The link target of descriptor `descriptor`, or `nil` when it is not open.
    static func target(of descriptor: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
    }

    /// How many of this process's descriptors are TCP sockets whose remote port is `port` and whose local
    /// port is `localPort` (one connection: another test's client that reached the same port number,
    /// reused after its own server died, is not counted).
    static func sockets(toPort port: Int, fromLocalPort localPort: Int) -> Int {
        sockets(toPort: port, fromLocalPorts: [localPort])
    }

    /// How many of this process's descriptors are TCP sockets to any of `ports`, whatever their local port:
    /// for servers that stay up for the whole check, whose port numbers no other test can reach meanwhile.
    static func sockets(toPorts ports: [Int]) -> Int {
        let hexPorts = ports.map { ":" + String(format: "%04X", $0) }
        return countSockets { remote, _ in hexPorts.contains { remote.hasSuffix($0) } }
    }

    /// How many of this process's descriptors are TCP sockets whose remote port is `port` and whose local
    /// port is one of `localPorts` (the clients a server listed: see ``clientPorts(of:)``).
    static func sockets(toPort port: Int, fromLocalPorts localPorts: Set<Int>) -> Int {
        let hexLocalPorts = localPorts.map { ":" + String(format: "%04X", $0) }
        let hexPort = ":" + String(format: "%04X", port)
        return countSockets { remote, local in
            remote.hasSuffix(hexPort) && hexLocalPorts.contains { local.hasSuffix($0) }
        }
    }

    /// The TCP sockets among this process's descriptors whose `/proc/self/net/tcp` row's remote and local
    /// address fields (`HEXADDR:HEXPORT`) satisfy `matches`.
    private static func countSockets(_ matches: (_ remote: Substring, _ local: Substring) -> Bool) -> Int {
        let inodes = Set(
            targets().compactMap { target -> String? in
                guard target.hasPrefix("socket:[") else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
        var count = 0
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // FileHandle reads to the end; String(contentsOfFile:) stops after the first page of a /proc file.
            guard let handle = FileHandle(forReadingAtPath: table), let data = try? handle.readToEnd() else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, inodes.contains(String(fields[9])) else { continue }
                if matches(fields[2], fields[1]) { count += 1 }
            }
        }
        return count
    }

    /// The local ports of the clients the server on `port` lists (`CLIENT LIST`, asked by `redis-cli`, a
    /// separate process): this test's own connections to its own server, so a leak check counts them and
    /// not another test's client that reached the same port number after its own server on it died.
    static func clientPorts(of port: Int) async throws -> Set<Int> {
        let list = try await RedisCLI.run(port: port, ["CLIENT", "LIST"])
        return Set(
            list.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("addr=") }?.split(separator: ":").last.flatMap {
                    Int($0)
                }
            })
    }
}
