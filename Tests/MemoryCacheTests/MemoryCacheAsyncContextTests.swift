import CacheCore
import MemoryCache
import Testing

/// Which overload a call picks inside `async` code. The file compiling is half the test: each call to the
/// memory tier below has no `await` (and the reads no `try`), which compiles only when the synchronous
/// method is picked; the generic helper must `await`, which compiles only through the protocol.
@Suite struct MemoryCacheAsyncContextTests {
    @Test func insideAnAsyncFunctionTheSynchronousMethodsArePicked() async throws {
        let memory = try MemoryCache<String, Int>()
        await Task.yield()  // an `async` context from here on

        try memory.setValue(1, forKey: "a")
        try memory.setValue(2, forKey: "b", expiry: .never)
        try memory.setValue(3, forKey: "c", expiry: .minutes(5), cost: 1)
        try memory.setEntry(CacheEntry(value: 4), forKey: "d")
        let value: Int? = memory.value(forKey: "a")
        let entry: CacheEntry<Int>? = memory.entry(forKey: "b")
        memory.removeEntry(forKey: "c")
        let removed: Int? = memory.removeValue(forKey: "d")
        memory.removeAll()

        #expect(value == 1)
        #expect(entry?.value == 2)
        #expect(removed == 4)
        #expect(memory.count == 0)
    }

    @Test func throughTheProtocolTheSameCallsAwait() async throws {
        let memory = try MemoryCache<String, Int>()
        try await store(5, in: memory)
        #expect(try await read(from: memory) == 5)
        #expect(memory.value(forKey: "k") == 5)
    }

    private func store(_ value: Int, in cache: any Cache<String, Int>) async throws {
        try await cache.setValue(value, forKey: "k", expiry: nil)
    }

    private func read<C: Cache<String, Int>>(from cache: C) async throws -> Int? {
        try await cache.value(forKey: "k")
    }
}
