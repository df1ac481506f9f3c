import Testing

@testable import RedisConnection

/// The slot map read from hand-built `CLUSTER SHARDS` and `CLUSTER SLOTS` replies: both protocol versions,
/// numbers as integers or strings, unknown endpoints, failed primaries, and malformed replies.
@Suite struct ClusterTopologyTests {
    @Test(arguments: [false, true])
    func readsShardsWithNumbersAsIntegersOrStrings(asStrings: Bool) throws {
        // Given a RESP3 reply of two shards, the first serving two ranges
        let reply = RESPValue.array([
            shard(
                slots: [0, 99, 200, 300], nodes: [node("a", 7000, "master"), node("b", 7003, "replica")],
                asStrings: asStrings),
            shard(slots: [100, 199], nodes: [node("c", 7001, "master")], asStrings: asStrings),
        ])
        // When it is read
        let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
        // Then each slot has its primary, the replicas are kept, and the gaps have none
        #expect(topology.primary(for: slot(0)) == address(7000))
        #expect(topology.primary(for: slot(99)) == address(7000))
        #expect(topology.primary(for: slot(150)) == address(7001))
        #expect(topology.primary(for: slot(300)) == address(7000))
        #expect(topology.primary(for: slot(301)) == nil)
        #expect(topology.shards[0].slots == [0...99, 200...300])
        #expect(topology.shards[0].replicas.map(\.address) == [address(7003)])
        #expect(topology.shards[0].primary.id == "a")
        #expect(topology.primaries == [address(7000), address(7001)])
        #expect(!topology.coversAllSlots)
    }

    @Test func leavesAPrimaryWithoutSlotsOutOfThePrimaries() throws {
        // Given a failed primary whose replica took over, listed as a shard of its own without slots
        let reply = RESPValue.array([
            shard(slots: [0, 16383], nodes: [node("new", 7003, "master")]),
            shard(slots: [], nodes: [node("old", 7000, "master", health: "failed")]),
        ])
        // When it is read, then only the primary that serves slots is one to route to or connect to
        let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
        #expect(topology.shards.count == 2)
        #expect(topology.primaries == [address(7003)])
    }

    @Test func readsShardsSentAsFlatListsOfPairsInRESP2() throws {
        // Given the RESP2 form: every map a flat list of field, value, field, value
        let node = RESPValue.array([
            bulk("id"), bulk("a"), bulk("port"), .integer(7000), bulk("ip"), bulk("127.0.0.21"), bulk("endpoint"),
            bulk("127.0.0.21"), bulk("role"), bulk("master"), bulk("health"), bulk("online"),
        ])
        let reply = RESPValue.array([
            .array([bulk("slots"), .array([.integer(0), .integer(16383)]), bulk("nodes"), .array([node])])
        ])
        // When it is read, then the one shard serves every slot
        let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
        #expect(topology.coversAllSlots)
        #expect(topology.primary(for: slot(16383)) == RedisConnection.Address(host: "127.0.0.21", port: 7000))
    }

    @Test func prefersTheOnlinePrimaryAndTheQueriedHostForAnUnknownEndpoint() throws {
        // Given a shard during a failover: the old primary failed, the promoted one online with endpoint `?`
        let reply = RESPValue.array([
            shard(
                slots: [0, 16383],
                nodes: [
                    node("old", 7000, "master", health: "failed"), node("new", 7003, "master", endpoint: "?"),
                    node("r", 7004, "replica", health: "loading"),
                ])
        ])
        // When it is read
        let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.27")
        // Then the online primary serves, reached at the host that was asked
        #expect(topology.primary(for: slot(5)) == RedisConnection.Address(host: "127.0.0.27", port: 7003))
        #expect(topology.shards[0].replicas.map(\.health) == [.loading])
    }

    @Test func leavesTheSlotsOfAShardWithoutPrimaryUnassigned() throws {
        let reply = RESPValue.array([shard(slots: [0, 10], nodes: [node("r", 7003, "replica")])])
        let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
        #expect(topology.shards.isEmpty)
        #expect(topology.primary(for: slot(0)) == nil)
    }

    /// Replies that cannot be a slot map, each with the words its error names.
    static let malformedShards: [(RESPValue, String)] = [
        (.integer(1), "not an array"),
        (.array([.integer(1)]), "neither a map nor a list of pairs"),
        (.array([.map([pair("nodes", .array([]))])]), "slot bounds"),
        (.array([shard(slots: [0], nodes: [])]), "slot bounds"),
        (.array([shard(slots: [5, 2], nodes: [node("a", 7000, "master")])]), "not within"),
        (.array([shard(slots: [0, 16384], nodes: [node("a", 7000, "master")])]), "not within"),
        (
            .array([.map([pair("slots", .array([bulk("x"), .integer(3)])), pair("nodes", .array([]))])]), "not a number"
        ),
        (.array([.map([pair("slots", .array([]))])]), "no list of nodes"),
        (
            .array([shard(slots: [0, 1], nodes: [.map([pair("role", bulk("master")), pair("ip", bulk("h"))])])]),
            "no port"
        ),
        (.array([shard(slots: [0, 1], nodes: [node("a", 70_000, "master")])]), "out of range"),
        (
            .array([shard(slots: [0, 1], nodes: [.map([pair("port", .integer(1)), pair("role", bulk("master"))])])]),
            "neither endpoint"
        ),
        (
            .array([shard(slots: [0, 1], nodes: [.map([pair("port", .integer(1)), pair("ip", bulk("h"))])])]), "no role"
        ),
        (
            .array([
                shard(slots: [0, 10], nodes: [node("a", 7000, "master")]),
                shard(slots: [10, 20], nodes: [node("b", 7001, "master")]),
            ]), "claimed by two shards"
        ),
    ]

    @Test(arguments: malformedShards)
    func refusesAMalformedShardsReplyWithATypedError(reply: RESPValue, naming words: String) {
        #expect {
            _ = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
        } throws: { error in
            guard let error = error as? ConnectionError else { return false }
            return error.code == .protocolViolation && error.message.contains(words)
        }
    }

    @Test func readsSlotsMergingRangesOfOnePrimary() throws {
        // Given a CLUSTER SLOTS reply: two ranges of one primary (one with string numbers), a null host
        let reply = RESPValue.array([
            .array([.integer(0), .integer(99), nodeList("127.0.0.21", 7000, "a"), nodeList("127.0.0.22", 7003, "b")]),
            .array([bulk("100"), bulk("199"), .array([.null, bulk("7001"), bulk("c"), .map([])])]),
            .array([.integer(200), .integer(16383), nodeList("127.0.0.21", 7000, "a")]),
        ])
        // When it is read
        let topology = try ClusterTopology(slotsReply: reply, queriedHost: "127.0.0.27")
        // Then the primary's ranges form one shard; the unknown host is the one asked
        #expect(topology.shards.count == 2)
        #expect(topology.shards[0].slots == [0...99, 200...16383])
        #expect(topology.shards[0].replicas.map(\.address) == [RedisConnection.Address(host: "127.0.0.22", port: 7003)])
        #expect(topology.primary(for: slot(150)) == RedisConnection.Address(host: "127.0.0.27", port: 7001))
        #expect(topology.coversAllSlots)
    }

    @Test(arguments: [
        RESPValue.simpleString("OK"),
        .array([.array([.integer(0), .integer(1)])]),
        .array([.array([.integer(0), .integer(1), .array([bulk("h")])])]),
        .array([.array([.integer(0), .integer(99_999), nodeList("h", 1, "a")])]),
        .array([.array([.integer(0), .integer(1), .array([bulk("h"), bulk("port")])])]),
    ])
    func refusesAMalformedSlotsReplyWithATypedError(reply: RESPValue) {
        #expect {
            _ = try ClusterTopology(slotsReply: reply, queriedHost: "127.0.0.1")
        } throws: { error in
            (error as? ConnectionError)?.code == .protocolViolation
        }
    }

    @Test func aMovedSlotChangesOwnerAndAnUnknownPrimaryBecomesAShard() throws {
        // Given two shards splitting the slots
        let topology = try ClusterTopology(shards: [
            .init(slots: [0...8191], primary: .init(address: address(7000))),
            .init(slots: [8192...16383], primary: .init(address: address(7001))),
        ])
        // When slot 100 moves to the second primary, and slot 9000 to a node the map does not know
        let moved = topology.assigning(slot(100), to: address(7001)).assigning(slot(9000), to: address(7009))
        // Then only those slots change owner, and every slot still has exactly one primary
        #expect(moved.primary(for: slot(100)) == address(7001))
        #expect(moved.primary(for: slot(99)) == address(7000))
        #expect(moved.primary(for: slot(101)) == address(7000))
        #expect(moved.primary(for: slot(9000)) == address(7009))
        #expect(moved.shards[0].slots == [0...99, 101...8191])
        #expect(moved.shards[1].slots == [100...100, 8192...8999, 9001...16383])
        #expect(moved.coversAllSlots)
        #expect(topology.primary(for: slot(100)) == address(7000))
    }

    // MARK: - Building replies

    private func slot(_ number: Int) -> HashSlot { HashSlot(rawValue: number)! }
    private func address(_ port: Int) -> RedisConnection.Address { .init(host: "127.0.0.1", port: port) }
}

private func bulk(_ text: String) -> RESPValue { .bulkString(Array(text.utf8)) }
private func pair(_ name: String, _ value: RESPValue) -> RESPValue.Pair { .init(key: bulk(name), value: value) }

private func shard(slots: [Int], nodes: [RESPValue], asStrings: Bool = false) -> RESPValue {
    .map([
        pair("slots", .array(slots.map { asStrings ? bulk(String($0)) : .integer(Int64($0)) })),
        pair("nodes", .array(nodes)),
    ])
}

private func node(
    _ id: String, _ port: Int, _ role: String, health: String = "online", endpoint: String = "127.0.0.1"
) -> RESPValue {
    .map([
        pair("id", bulk(id)), pair("port", .integer(Int64(port))), pair("ip", bulk("127.0.0.1")),
        pair("endpoint", bulk(endpoint)), pair("role", bulk(role)), pair("replication-offset", .integer(0)),
        pair("health", bulk(health)),
    ])
}

private func nodeList(_ host: String, _ port: Int, _ id: String) -> RESPValue {
    .array([bulk(host), .integer(Int64(port)), bulk(id)])
}
