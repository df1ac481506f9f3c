// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "CacheCore", targets: ["CacheCore"]),
        .library(name: "MemoryCache", targets: ["MemoryCache"]),
        .library(name: "DiskCache", targets: ["DiskCache"]),
        .library(name: "MultiCache", targets: ["MultiCache"]),
        .library(name: "CacheTesting", targets: ["CacheTesting"]),
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["strata"]),
    ],
    targets: [
        .target(name: "CacheCore"),
        .target(name: "MemoryCache", dependencies: ["CacheCore"]),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "DiskCache",
            dependencies: [
                "CacheCore",
                .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "MultiCache", dependencies: ["CacheCore"]),
        .target(name: "CacheTesting", dependencies: ["CacheCore"]),
        // What the test targets and the reliability tools share (seeded generator, temporary folders, the
        // history oracle, the stress knob, gates, hostile items, mounts); in no product, like
        // swift-collections' _CollectionsTestSupport.
        .target(name: "StrataTestSupport", dependencies: ["CacheCore"], path: "Tests/StrataTestSupport"),
        // The umbrella: `import Strata` re-exports the four cache modules.
        .target(name: "Strata", dependencies: ["CacheCore", "MemoryCache", "DiskCache", "MultiCache"]),
        .executableTarget(
            name: "strata",
            dependencies: ["CacheCore", "DiskCache"]
        ),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore", "CacheTesting", "StrataTestSupport"]),
        .testTarget(name: "MemoryCacheTests", dependencies: ["MemoryCache", "CacheTesting", "StrataTestSupport"]),
        .testTarget(
            name: "DiskCacheTests",
            dependencies: ["DiskCache", "CacheTesting", "StrataTestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "MultiCacheTests",
            dependencies: ["MultiCache", "MemoryCache", "DiskCache", "CacheTesting", "StrataTestSupport"]
        ),
        .testTarget(name: "CacheTestingTests", dependencies: ["CacheTesting", "StrataTestSupport"]),
        .testTarget(name: "StrataCLITests", dependencies: ["strata", "StrataTestSupport"]),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataTestSupport"]),
        // Concurrency tests: many tasks racing on MemoryCache and MultiCache, run under ThreadSanitizer.
        .testTarget(
            name: "ConcurrencyTests",
            dependencies: ["CacheCore", "MemoryCache", "MultiCache", "CacheTesting", "StrataTestSupport"]
        ),
        // Reliability tools (Docs/Reliability.md): the process-level scenarios and the decoder fuzzer, run by
        // the scripts in Tests/Reliability.
        .executableTarget(
            name: "StrataTorture",
            dependencies: ["CacheCore", "DiskCache", "StrataTestSupport"],
            path: "Tests/Reliability/Torture"
        ),
        .executableTarget(name: "StrataFuzz", dependencies: ["DiskCache"], path: "Tests/Reliability/Fuzz"),
    ]
)

// Settings shared by every Swift target; warnings-as-errors stays on CI's command line (unsafeFlags would
// make the package unusable as a dependency).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
