// Stand-ins for the placeholders that README.md and Docs/ use in their examples ("`data`, `show`, `url` and
// `download` stand for your own values and functions"). .ci/check-snippets.py compiles every example
// against these; they are never run.
import CacheTesting
import Foundation
import Strata

let data = Data("example".utf8)
let key = "example"
let url = URL(string: "https://example.com/avatar.png")!
let appSupport = FileManager.default.temporaryDirectory
let myThirtyTwoBytes = Data(repeating: 7, count: 32)
let token = Data("token".utf8)
let cache: any Cache<String, Data> = InMemoryExample()

func show(_ value: Data) {}
func download(_ url: URL) async throws -> Data { data }
func renderThumbnail(of url: URL) async throws -> Data { data }

struct Logger {
    func warning(_ message: String) {}
}
let logger = Logger()

/// The smallest `Cache` an example can hold: a MemoryCache with no limits.
func InMemoryExample() -> MemoryCache<String, Data> {
    try! MemoryCache<String, Data>(countLimit: nil)
}

// The app types of Docs/Testing.md, as a reader would have written them.
struct SessionStore {
    let cache: any Cache<String, Data>
    func save(_ token: Data, for user: String) async throws {
        try await cache.setValue(token, forKey: user, expiry: .seconds(600))
    }
    func token(for user: String) async throws -> Data? { try await cache.value(forKey: user) }
}

enum Avatar: Equatable { case placeholder, image(Data) }

struct AvatarLoader {
    let cache: any Cache<String, Data>
    func avatar(for user: String) async -> Avatar {
        guard let data = try? await cache.value(forKey: user) else { return .placeholder }
        return .image(data)
    }
}

// @unchecked Sendable: a stand-in that is type-checked, never run.
final class GreetingModel: @unchecked Sendable {
    let cache: any Cache<String, Data>
    var isLoading = false
    var text = ""
    init(cache: any Cache<String, Data>) { self.cache = cache }
    func load() async {
        isLoading = true
        defer { isLoading = false }
        text = (try? await cache.value(forKey: "greeting")).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

struct FeedRefresher {
    let cache: any Cache<String, Data>
    let ttl: Duration
    func refresh(_ feed: String) async throws {
        try await cache.removeEntry(forKey: feed)
        try await cache.setValue(data, forKey: feed, expiry: .after(ttl))
    }
}

typealias MyCache = MemoryCache<String, Data>

func makeDiskCache(directory: URL, clock: ManualClock) throws -> DiskCache<String, Data> {
    try DiskCache(
        configuration: DiskCacheConfiguration(
            name: "contract", directory: directory, masterKeySource: .masterKey(myThirtyTwoBytes), clock: clock))
}
