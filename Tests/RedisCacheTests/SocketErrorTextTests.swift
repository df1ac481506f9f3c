import CacheCore
import Testing

@testable import RedisCache
@testable import RedisConnection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connect failures read as sentences: the system's text beside the number, and the address once.
@Suite struct SocketErrorTextTests {
    @Test func anErrnoShowsTheSystemTextAndTheNumber() {
        let refused = Socket.errorText(ECONNREFUSED)
        #expect(refused.hasPrefix(String(cString: strerror(ECONNREFUSED))))
        #expect(refused.hasSuffix(" (errno \(ECONNREFUSED))"))
        #if os(Linux)
        #expect(refused == "Connection refused (errno 111)")
        #endif
    }

    @Test func aRefusedConnectNamesTheAddressOnceAndTheReason() async throws {
        let port = try FreePort.find()
        var configuration = try RedisTier.configuration(port: port)
        configuration.connectTimeout = .seconds(5)
        configuration.tracksInvalidations = false
        let cache = try RedisCache<String, String>(configuration: configuration)
        let error = await #expect(throws: CacheError.self) { try await cache.value(forKey: "k") }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("Connection refused (errno"), "\(text)")
        #expect(text.components(separatedBy: "\(configuration.host):\(port)").count == 2, "\(text)")
        await cache.close()
    }
}
