/// Which primary serves each of a Redis Cluster's 16,384 hash slots, and which replicas follow it: one
/// snapshot of the cluster's slot map, as `CLUSTER SHARDS` or `CLUSTER SLOTS` reported it.
///
/// Immutable: a refresh or a `MOVED` reply makes a new value (``assigning(_:to:)``), so a router can swap
/// the whole map under its lock and readers never see half an update. Slots no shard claims (a cluster
/// being set up, a shard whose every node failed) have no primary; the router treats them like
/// `CLUSTERDOWN`. Built from the replies by ``init(shardsReply:queriedHost:)`` and
/// ``init(slotsReply:queriedHost:)`` (in `ClusterTopology+Shards.swift` and `ClusterTopology+Slots.swift`).
///
/// ```swift
/// let topology = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
/// let primary = topology.primary(for: HashSlot(key: "user:{42}:name"))  // 127.0.0.1:30002
/// ```
///
/// Thread safety: a value type; `Sendable`.
package struct ClusterTopology: Sendable, Equatable {
    /// One node as the cluster describes it.
    package struct Node: Sendable, Hashable, CustomStringConvertible {
        /// The node's 40-character cluster id, when the reply gave one.
        package var id: String?
        /// Where clients reach it.
        package var address: RedisConnection.Address
        /// What the cluster says of its health.
        package var health: Health

        /// Creates a node description.
        ///
        /// - Parameters:
        ///   - id: The node's cluster id, or `nil`.
        ///   - address: Where clients reach it.
        ///   - health: Its health; `CLUSTER SLOTS` reports none and lists only nodes it deems usable.
        package init(id: String? = nil, address: RedisConnection.Address, health: Health = .online) {
            self.id = id
            self.address = address
            self.health = health
        }

        /// `host:port`.
        package var description: String { address.description }
    }

    /// A node's health in `CLUSTER SHARDS` (`online`, `failed`, `loading`).
    package enum Health: Sendable, Hashable {
        /// Serving.
        case online
        /// Marked failed by the cluster.
        case failed
        /// Loading its data set (a replica syncing, a restarted primary); not yet serving.
        case loading
        /// A value this client does not know, kept as the server sent it.
        case other(String)

        /// The health named `text`.
        package init(_ text: String) {
            switch text {
            case "online": self = .online
            case "failed", "fail": self = .failed
            case "loading": self = .loading
            default: self = .other(text)
            }
        }
    }

    /// One primary, the slot ranges it serves, and its replicas.
    package struct Shard: Sendable, Equatable {
        /// The ranges of slots the primary serves, ascending; empty for a primary without slots.
        package var slots: [ClosedRange<Int>]
        /// The node that accepts writes for those slots.
        package var primary: Node
        /// The nodes that replicate it.
        package var replicas: [Node]

        /// Creates a shard.
        ///
        /// - Parameters:
        ///   - slots: The slot ranges, each within `0...16383`.
        ///   - primary: The primary.
        ///   - replicas: Its replicas.
        package init(slots: [ClosedRange<Int>], primary: Node, replicas: [Node] = []) {
            self.slots = slots
            self.primary = primary
            self.replicas = replicas
        }
    }

    /// The shards, in the order the reply listed them.
    package let shards: [Shard]
    /// Slot number → index into ``shards``, or ``unassigned``: one lookup per command, 32 KiB per map.
    private let owners: [UInt16]
    private static let unassigned = UInt16.max

    /// Creates a map from `shards`.
    ///
    /// - Parameter shards: The shards; their slot ranges must lie in `0...16383` and not overlap.
    /// - Throws: ``ConnectionError`` with ``ConnectionError/Code/protocolViolation`` when a range is out of
    ///   bounds or claimed by two shards (a reply that cannot be a true slot map).
    /// - Complexity: O(16,384 + shards).
    package init(shards: [Shard]) throws(ConnectionError) {
        var owners = [UInt16](repeating: Self.unassigned, count: HashSlot.count)
        for (index, shard) in shards.enumerated() {
            for range in shard.slots {
                guard range.lowerBound >= 0, range.upperBound < HashSlot.count else {
                    throw ConnectionError(.protocolViolation, "slot range \(range) is outside 0...16383")
                }
                for slot in range {
                    guard owners[slot] == Self.unassigned else {
                        throw ConnectionError(.protocolViolation, "slot \(slot) is claimed by two shards")
                    }
                    owners[slot] = UInt16(index)
                }
            }
        }
        self.shards = shards
        self.owners = owners
    }

    /// The shard serving `slot`, or `nil` when no shard claims it.
    package func shard(for slot: HashSlot) -> Shard? {
        let owner = owners[slot.rawValue]
        return owner == Self.unassigned ? nil : shards[Int(owner)]
    }

    /// Where to send a command for `slot`, or `nil` when no shard claims it.
    package func primary(for slot: HashSlot) -> RedisConnection.Address? {
        shard(for: slot)?.primary.address
    }

    /// The addresses of the primaries that serve at least one slot, in shard order. A primary without slots
    /// (a failed one whose replica took over, until it rejoins as a replica; a node added before any slot
    /// moved to it) is left out: nothing is routed to it.
    package var primaries: [RedisConnection.Address] {
        shards.filter { !$0.slots.isEmpty }.map(\.primary.address)
    }

    /// Whether every slot has a primary (the cluster can serve every key).
    ///
    /// - Complexity: O(16,384).
    package var coversAllSlots: Bool { !owners.contains(Self.unassigned) }

    /// The map after a `MOVED slot address` reply: `slot` now belongs to the primary at `address`, a shard
    /// of its own (without replicas or slots otherwise) when the map does not know that node yet.
    ///
    /// The cluster says the move is permanent, so the map changes at once; the refresh it triggers brings
    /// the replicas and the rest of a resharding.
    ///
    /// - Parameters:
    ///   - slot: The slot the reply names.
    ///   - address: The primary the reply names.
    /// - Returns: The updated map.
    /// - Complexity: O(16,384 + shards).
    package func assigning(_ slot: HashSlot, to address: RedisConnection.Address) -> ClusterTopology {
        var shards = self.shards
        for index in shards.indices {
            shards[index].slots = Self.removing(slot.rawValue, from: shards[index].slots)
        }
        let single = slot.rawValue...slot.rawValue
        if let index = shards.firstIndex(where: { $0.primary.address == address }) {
            shards[index].slots = (shards[index].slots + [single]).sorted { $0.lowerBound < $1.lowerBound }
        } else {
            shards.append(Shard(slots: [single], primary: Node(address: address)))
        }
        // Cannot throw: every range came from a valid map, minus one slot, plus that slot once.
        return (try? ClusterTopology(shards: shards)) ?? self
    }

    /// `ranges` without `slot`, splitting the range that held it.
    private static func removing(_ slot: Int, from ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        ranges.flatMap { range -> [ClosedRange<Int>] in
            guard range.contains(slot) else { return [range] }
            var parts: [ClosedRange<Int>] = []
            if range.lowerBound < slot { parts.append(range.lowerBound...(slot - 1)) }
            if slot < range.upperBound { parts.append((slot + 1)...range.upperBound) }
            return parts
        }
    }

    /// Two maps are equal when they list the same shards (the slot index follows from them).
    package static func == (lhs: ClusterTopology, rhs: ClusterTopology) -> Bool { lhs.shards == rhs.shards }
}
