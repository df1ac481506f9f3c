/// A `MOVED` or `ASK` redirection: the slot and the node the cluster points to.
///
/// The reply reads `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>`; the host may be empty
/// (`:6380`) when the node does not know its own address, and then means the host the command was sent to.
/// The port is after the last colon, so an IPv6 host keeps its colons. Source: Redis Cluster specification,
/// "Moved Redirection" and "ASK redirection".
///
/// Thread safety: a value type; `Sendable`.
package struct ClusterRedirect: Sendable, Equatable {
    /// `MOVED`: the slot lives elsewhere for good; `ASK`: for this one command only (a migration).
    package enum Kind: Sendable, Equatable { case moved, ask }

    /// Which redirection this is.
    package var kind: Kind
    /// The slot the reply names.
    package var slot: HashSlot
    /// The node to send the command to.
    package var address: RedisConnection.Address

    /// Creates a redirection.
    ///
    /// - Parameters:
    ///   - kind: `MOVED` or `ASK`.
    ///   - slot: The slot.
    ///   - address: The node to go to.
    package init(kind: Kind, slot: HashSlot, address: RedisConnection.Address) {
        self.kind = kind
        self.slot = slot
        self.address = address
    }

    /// Reads an error reply's text, or `nil` when it is not a well-formed `MOVED` or `ASK`.
    ///
    /// - Parameters:
    ///   - message: The error reply, such as `MOVED 3999 127.0.0.1:6381`.
    ///   - queriedHost: The host the command went to, for an empty host.
    package init?(_ message: String, queriedHost: String) {
        let words = message.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 3, let number = Int(words[1]), let slot = HashSlot(rawValue: number),
            let colon = words[2].lastIndex(of: ":"), let port = Int(words[2][words[2].index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        switch words[0] {
        case "MOVED": kind = .moved
        case "ASK": kind = .ask
        default: return nil
        }
        let host = String(words[2][..<colon])
        self.slot = slot
        self.address = RedisConnection.Address(host: host.isEmpty ? queriedHost : host, port: port)
    }
}
