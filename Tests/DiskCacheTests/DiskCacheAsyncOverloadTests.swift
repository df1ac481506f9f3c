import CacheCore
import CacheTesting
import DiskCache
import Foundation
import StrataTestSupport
import Testing

/// The `async` conveniences DiskCache declares itself: in `async` code they win over the protocol's, run
/// off the calling thread, and honour the store's default expiry.
@Suite struct DiskCacheAsyncOverloadTests {
    let folder = TemporaryFolder(label: "async")

    @Test(arguments: TestStore.engines)
    func asyncSetValueWithoutExpiryUsesTheDefaultExpiry(_ engine: Engine) async throws {
        // Given a store whose entries live 10 s by default
        let clock = ManualClock()
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "async", directory: folder.url, defaultExpiry: .seconds(10),
                masterKeySource: .masterKey(Data(repeating: 7, count: 32)), clock: clock, engine: engine))

        // When a value is stored and read through the async overloads
        try await cache.setValue(Data("v".utf8), forKey: "k")
        let read = try await cache.value(forKey: "k")

        // Then it reads back, carries the default expiry, and is gone once that passes
        #expect(read == Data("v".utf8))
        let entry = try await cache.entry(forKey: "k")
        #expect(entry?.expiresAt == clock.now.addingTimeInterval(10))
        clock.advance(by: 10)
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test(arguments: TestStore.engines)
    func synchronousMethodsAreReachableFromAsyncCodeAsFunctionValues(_ engine: Engine) async throws {
        // Given a store opened inside an async function
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "async", directory: folder.url, masterKeySource: .masterKey(Data(repeating: 7, count: 32)),
                engine: engine))

        // When the synchronous methods are named as synchronous function values (this file compiles only
        // while that picks them: a bare call in async code picks the async twin)
        let write: (Data, String, Expiry?) throws -> Void = cache.setValue(_:forKey:expiry:)
        let read: (String) throws -> Data? = cache.value(forKey:)
        try write(Data("sync".utf8), "k", nil)

        // Then they work on the same store as the async twins
        #expect(try read("k") == Data("sync".utf8))
        #expect(try await cache.value(forKey: "k") == Data("sync".utf8))
    }
}
