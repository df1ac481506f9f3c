extension CoordinatorStorage {
    // A tier whose writes and removals are synchronous (a `MemoryCache`, a `DiskCache`'s synchronous
    // methods) cannot await the stores a fence must wait for. Instead its store of a loaded value is
    // atomic with respect to the start of its writes and removals: the store holds `storeGate` from its
    // check to its end, and a write or removal takes the gate to put up its fence. So a fence never finds a
    // store of this coordinator under way, and its `beginMutation` never asks to wait: a store either
    // ended before the fence (the write or removal that follows replaces or removes what it stored) or
    // checks after it and is skipped. Only a cache whose every store goes through
    // `storeLoadedValueAtOnce(ofLoad:_:)` may use `fencedAtOnce(_:_:)`.

    /// Runs `body`, a synchronous write or removal of `key` (of every key when `nil`), fenced: loads of the
    /// key in flight will not store their results, and no store of the key begins until `body` has
    /// returned or thrown.
    ///
    /// Blocks while a store of a loaded value runs (one tier write); never suspends.
    ///
    /// - Throws: What `body` threw.
    package func fencedAtOnce(_ key: Key?, _ body: () throws -> Void) rethrows {
        storeGate.withLock { _ in
            // Always `.proceed`: every store is atomic under the gate, so none is under way here.
            _ = handle { $0.beginMutation(of: key) }
        }
        defer { handle { $0.endMutation(of: key) } }
        try body()
    }

    /// Runs `write`, which stores the value of load `loadID` synchronously, unless the load was fenced or
    /// abandoned, its key changed since it was registered, or a write or removal of the key is running;
    /// the whole store is atomic with respect to the start of ``fencedAtOnce(_:_:)``.
    ///
    /// `write` runs with the gate held: it must not call user code that could write to or remove from the
    /// same cache (compute costs and encode values before, release replaced values after).
    ///
    /// - Returns: What `write` returned, or `nil` when the value is not to be stored.
    package func storeLoadedValueAtOnce<Result>(ofLoad loadID: UInt64, _ write: () -> Result) -> Result? {
        let (result, action) = storeGate.withLock { _ -> (Result?, Machine.EndStoreAction) in
            guard case .store(let storeID) = handle({ $0.beginStoringLoad(loadID) }) else { return (nil, .none) }
            let result = write()
            return (result, handle { $0.endStore(storeID) })
        }
        // No fence of this cache parks (see above); resumed anyway, so a misuse cannot strand a task.
        if case .resumeMutations(let mutations) = action {
            for mutation in mutations { mutation.resume() }
        }
        return result
    }
}
