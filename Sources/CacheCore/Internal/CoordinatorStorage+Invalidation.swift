extension CoordinatorStorage {
    // An invalidation learned from a tier (another process changed keys) is a removal of those keys from
    // the tiers above that tier, fenced exactly like `fenced(_:_:)`: the same machine events, split in
    // two so that the fence goes up synchronously, on the thread that delivers the invalidation, while the
    // tier calls run later on a task. A reply read before the invalidation then finds the key's stamp
    // advanced (or the key still fenced) and is never written back, however late it arrives.

    /// A fence put up by ``beginInvalidation(of:)`` and not yet taken down.
    package struct InvalidationFence: Sendable {
        /// The keys fenced; `nil` for every key.
        package let keys: [Key]?
        /// Stores that had passed their check before the fence; the removal waits for them.
        let stores: Set<UInt64>
    }

    /// Fences `keys` (every key when `nil`) at once, as the start of a removal would: loads in flight
    /// will not store their results, reads in flight drop their write-backs, and no store of the keys
    /// begins until ``endInvalidation(_:)``. Never suspends; takes the coordinator's lock once.
    ///
    /// - Parameter keys: The keys invalidated, or `nil` for all.
    /// - Returns: The fence; pass it to ``waitForStores(before:)`` and then ``endInvalidation(_:)``.
    package func beginInvalidation(of keys: [Key]?) -> InvalidationFence {
        let stores = handle { machine -> Set<UInt64> in
            guard let keys else {
                if case .waitForStores(let stores) = machine.beginMutation(of: nil) { return stores }
                return []
            }
            var stores: Set<UInt64> = []
            for key in keys {
                if case .waitForStores(let waiting) = machine.beginMutation(of: key) { stores.formUnion(waiting) }
            }
            return stores
        }
        return InvalidationFence(keys: keys, stores: stores)
    }

    /// Waits until the stores that had begun before `fence` went up have ended, so that the removal that
    /// follows lands after them.
    package func waitForStores(before fence: InvalidationFence) async {
        guard !fence.stores.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            switch handle({ $0.waitForStores(fence.stores, continuation: continuation) }) {
            case .resume(let mutation): mutation.resume()
            case .parked: notify(.parkedMutation)
            }
        }
    }

    /// Takes `fence` down once the removal it guarded has run.
    package func endInvalidation(_ fence: InvalidationFence) {
        handle { machine in
            guard let keys = fence.keys else { return machine.endMutation(of: nil) }
            for key in keys { machine.endMutation(of: key) }
        }
    }
}
