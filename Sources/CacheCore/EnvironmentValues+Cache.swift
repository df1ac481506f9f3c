#if canImport(SwiftUI)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SwiftUI

// SwiftUI support: a Strata cache travels through the environment, as the NSCache wrapper this project grew
// from did. Compiled on Apple platforms only; on Linux it is checked by .ci/darwin-typecheck.sh against the
// SwiftUI stand-in, together with the example view in .ci/darwin-examples/.

/// The environment entry behind ``SwiftUI/EnvironmentValues/strataCache``.
private struct StrataCacheKey: EnvironmentKey {
    static var defaultValue: (any Cache<String, Data>)? { nil }
}

extension EnvironmentValues {
    /// The cache that views below this point read, or `nil` when no view above set one (the default).
    ///
    /// Put a cache in with `.environment(\.strataCache, cache)` on a view, and read it with
    /// `@Environment(\.strataCache) private var cache`:
    ///
    /// ```swift
    /// ContentView().environment(\.strataCache, imageCache)
    ///
    /// struct Thumbnail: View {
    ///     @Environment(\.strataCache) private var cache
    ///     let key: String
    ///     var body: some View { ... }
    ///     func cachedData() async throws -> Data? { try await cache?.value(forKey: key) }
    /// }
    /// ```
    ///
    /// For other key and value types declare an `EnvironmentKey` of your own the same way
    /// (Docs/Platforms.md shows one). Thread safety: every `Cache` is `Sendable`, so a view may hand the cache
    /// to a task.
    public var strataCache: (any Cache<String, Data>)? {
        get { self[StrataCacheKey.self] }
        set { self[StrataCacheKey.self] = newValue }
    }
}
#endif  // canImport(SwiftUI): SwiftUI exists on Apple platforms only
