// The SwiftUI example of Docs/Platforms.md, type-checked by .ci/darwin-typecheck.sh against the SwiftUI
// stand-in: a cache put into the environment by one view and read by another.
import CacheCore
import Foundation
import SwiftUI

struct Gallery: View {
    let imageCache: any Cache<String, Data>

    var body: some View {
        Thumbnail(key: "cat.png").environment(\.strataCache, imageCache)
    }
}

struct Thumbnail: View {
    @Environment(\.strataCache) private var cache
    let key: String

    var body: some View { Text(key) }

    func cachedData() async throws -> Data? { try await cache?.value(forKey: key) }
}
