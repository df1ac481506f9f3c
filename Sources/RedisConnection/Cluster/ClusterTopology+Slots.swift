extension ClusterTopology {
    /// Reads the reply of `CLUSTER SLOTS`, the fallback for servers without `CLUSTER SHARDS` (before 7.0).
    ///
    /// Each entry is `[start, end, primary, replica…]`, a node being `[host, port, id?, metadata?]`;
    /// numbers are accepted as integers or decimal strings. A `null`, empty or `?` host means "the address
    /// you asked" (the command's documentation), so `queriedHost` stands in. The reply lists only usable
    /// nodes and no health, so every node is taken as online. Entries with the same primary become one
    /// shard. Source: `CLUSTER SLOTS` reference (https://redis.io/docs/latest/commands/cluster-slots/).
    ///
    /// - Parameters:
    ///   - reply: The reply.
    ///   - queriedHost: The host the command was sent to.
    /// - Throws: ``ConnectionError`` with ``ConnectionError/Code/protocolViolation`` when an entry is not a
    ///   list of at least three items, a number is not one or out of range, a node has no port, or two entries
    ///   claim one slot.
    /// - Complexity: O(16,384 + the reply's size).
    package init(slotsReply reply: RESPValue, queriedHost: String) throws(ConnectionError) {
        guard case .array(let entries) = reply else { throw Self.malformed("the reply is not an array") }
        var shards: [Shard] = []
        for entry in entries {
            guard case .array(let items) = entry, items.count >= 3 else {
                throw Self.malformed("a slot range is not a list of bounds and nodes")
            }
            let start = try Self.number(items[0], "a slot number")
            let end = try Self.number(items[1], "a slot number")
            guard start <= end, start >= 0, end < HashSlot.count else {
                throw Self.malformed("slot range \(start)-\(end) is not within 0...16383")
            }
            let primary = try Self.slotsNode(items[2], queriedHost: queriedHost)
            let replicas = try items.dropFirst(3).map { (item) throws(ConnectionError) in
                try Self.slotsNode(item, queriedHost: queriedHost)
            }
            if let index = shards.firstIndex(where: { $0.primary.address == primary.address }) {
                shards[index].slots.append(start...end)
                shards[index].slots.sort { $0.lowerBound < $1.lowerBound }
            } else {
                shards.append(Shard(slots: [start...end], primary: primary, replicas: replicas))
            }
        }
        try self.init(shards: shards)
    }

    /// One `[host, port, id?, metadata?]` node of a `CLUSTER SLOTS` entry.
    private static func slotsNode(_ value: RESPValue, queriedHost: String) throws(ConnectionError) -> Node {
        guard case .array(let parts) = value, parts.count >= 2 else {
            throw malformed("a node is not a list of host and port")
        }
        let host = parts[0].string ?? ""
        let port = try number(parts[1], "a port")
        guard (1...65_535).contains(port) else { throw malformed("port \(port) is out of range") }
        return Node(
            id: parts.count > 2 ? parts[2].string : nil,
            address: RedisConnection.Address(host: host.isEmpty || host == "?" ? queriedHost : host, port: port))
    }
}
