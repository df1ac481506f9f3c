extension ClusterTopology {
    /// Reads the reply of `CLUSTER SHARDS` (Redis 7.0+).
    ///
    /// Each shard is a map (RESP3) or a flat list of field–value pairs (RESP2) with `slots`, a flat list of
    /// inclusive start–end pairs, and `nodes`, each with `id`, `endpoint` or `ip`, `port` (or `tls-port`),
    /// `role` and `health`. Slot numbers and ports are accepted as integers or as decimal strings: some 7.0.x
    /// builds send strings. Per shard, the primary is the `master` whose health is `online`, else the first
    /// `master`; a shard without one (every node of it failed) serves nothing until a later refresh.
    /// An endpoint of `?` or empty means "the address you asked", per the command's documentation, so
    /// `queriedHost` stands in. Source: `CLUSTER SHARDS` reference (https://redis.io/docs/latest/commands/cluster-shards/).
    ///
    /// - Parameters:
    ///   - reply: The reply.
    ///   - queriedHost: The host the command was sent to.
    /// - Throws: ``ConnectionError`` with ``ConnectionError/Code/protocolViolation`` naming the first thing
    ///   that does not fit: a shard that is not a map, a missing or odd `slots` list, a slot number or port
    ///   that is not a number in range, a node without an address or role, overlapping shards.
    /// - Complexity: O(16,384 + the reply's size).
    package init(shardsReply reply: RESPValue, queriedHost: String) throws(ConnectionError) {
        guard case .array(let entries) = reply else { throw Self.malformed("the reply is not an array") }
        var shards: [Shard] = []
        for entry in entries {
            let fields = try Self.fields(of: entry, in: "a shard")
            guard let slotList = fields["slots"], case .array(let bounds) = slotList, bounds.count % 2 == 0 else {
                throw Self.malformed("a shard has no even list of slot bounds")
            }
            var slots: [ClosedRange<Int>] = []
            for index in stride(from: 0, to: bounds.count, by: 2) {
                let start = try Self.number(bounds[index], "a slot number")
                let end = try Self.number(bounds[index + 1], "a slot number")
                guard start <= end, start >= 0, end < HashSlot.count else {
                    throw Self.malformed("slot range \(start)-\(end) is not within 0...16383")
                }
                slots.append(start...end)
            }
            guard let nodeList = fields["nodes"], case .array(let nodeEntries) = nodeList else {
                throw Self.malformed("a shard has no list of nodes")
            }
            var primaries: [Node] = []
            var replicas: [Node] = []
            for nodeEntry in nodeEntries {
                let node = try Self.fields(of: nodeEntry, in: "a node")
                let described = try Self.node(node, queriedHost: queriedHost)
                guard let role = node["role"]?.string else { throw Self.malformed("a node has no role") }
                if role == "master" { primaries.append(described) } else { replicas.append(described) }
            }
            guard let primary = primaries.first(where: { $0.health == .online }) ?? primaries.first else { continue }
            shards.append(
                Shard(slots: slots.sorted { $0.lowerBound < $1.lowerBound }, primary: primary, replicas: replicas))
        }
        try self.init(shards: shards)
    }

    /// One node of a `CLUSTER SHARDS` reply.
    private static func node(_ fields: [String: RESPValue], queriedHost: String) throws(ConnectionError) -> Node {
        let port: Int
        if let plain = fields["port"] {
            port = try number(plain, "a port")
        } else if let tls = fields["tls-port"] {
            port = try number(tls, "a port")
        } else {
            throw malformed("a node has no port")
        }
        guard (1...65_535).contains(port) else { throw malformed("port \(port) is out of range") }
        let host = fields["endpoint"]?.string ?? fields["ip"]?.string
        guard let host else { throw malformed("a node has neither endpoint nor ip") }
        return Node(
            id: fields["id"]?.string,
            address: RedisConnection.Address(host: host.isEmpty || host == "?" ? queriedHost : host, port: port),
            health: fields["health"]?.string.map(Health.init) ?? .online)
    }

    /// The fields of a RESP3 map or a RESP2 flat list of pairs, by name (a repeated name keeps its first
    /// value).
    static func fields(of value: RESPValue, in what: String) throws(ConnectionError) -> [String: RESPValue] {
        var fields: [String: RESPValue] = [:]
        switch value {
        case .map(let pairs):
            for pair in pairs {
                guard let name = pair.key.string else { throw malformed("\(what) has a field without a name") }
                if fields[name] == nil { fields[name] = pair.value }
            }
        case .array(let items) where items.count % 2 == 0:
            for index in stride(from: 0, to: items.count, by: 2) {
                guard let name = items[index].string else { throw malformed("\(what) has a field without a name") }
                if fields[name] == nil { fields[name] = items[index + 1] }
            }
        default:
            throw malformed("\(what) is neither a map nor a list of pairs")
        }
        return fields
    }

    /// An integer sent as an integer or as its decimal digits.
    static func number(_ value: RESPValue, _ what: String) throws(ConnectionError) -> Int {
        switch value {
        case .integer(let number): return Int(number)
        default:
            guard let text = value.string, let number = Int(text) else { throw malformed("\(what) is not a number") }
            return number
        }
    }

    /// The error for a reply that cannot be a slot map.
    static func malformed(_ what: String) -> ConnectionError {
        ConnectionError(.protocolViolation, "malformed cluster topology: \(what)")
    }
}
