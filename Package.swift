// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "CacheCore", targets: ["CacheCore"]),
        .library(name: "MemoryCache", targets: ["MemoryCache"]),
        .library(name: "CacheCrypto", targets: ["CacheCrypto"]),
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
        // AES-256-GCM, HMAC, HKDF, master keys and their sources: the one crypto module every encrypting
        // tier shares. Only it links libcrypto (Linux); Apple platforms use CryptoKit and Security.
        .target(
            name: "CacheCrypto",
            dependencies: [
                "CacheCore",
                .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "DiskCache", dependencies: ["CacheCore", "CacheCrypto"]),
        .target(name: "MultiCache", dependencies: ["CacheCore"]),
        .target(name: "CacheTesting", dependencies: ["CacheCore"]),
        // The umbrella: `import Strata` re-exports the cache modules and CacheCrypto.
        .target(
            name: "Strata", dependencies: ["CacheCore", "CacheCrypto", "MemoryCache", "DiskCache", "MultiCache"]),
        .executableTarget(
            name: "strata",
            dependencies: ["CacheCore", "DiskCache"]
        ),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore", "CacheTesting"]),
        .testTarget(
            name: "CacheCryptoTests",
            dependencies: ["CacheCrypto"],
            resources: [.copy("Resources")]
        ),
        .testTarget(name: "MemoryCacheTests", dependencies: ["MemoryCache", "CacheTesting"]),
        .testTarget(name: "DiskCacheTests", dependencies: ["DiskCache", "CacheTesting"]),
        .testTarget(name: "MultiCacheTests", dependencies: ["MultiCache", "MemoryCache", "DiskCache", "CacheTesting"]),
        .testTarget(name: "CacheTestingTests", dependencies: ["CacheTesting"]),
        .testTarget(name: "StrataCLITests", dependencies: ["strata"]),
        .testTarget(name: "StrataTests", dependencies: ["Strata"]),
        // Reliability suite (Docs/Reliability.md): process-level scenarios, the decoder fuzzer, concurrency tests.
        .executableTarget(
            name: "StrataTorture",
            dependencies: ["CacheCore", "DiskCache"],
            path: "Tests/Reliability/Torture"
        ),
        .executableTarget(name: "StrataFuzz", dependencies: ["DiskCache"], path: "Tests/Reliability/Fuzz"),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["CacheCore", "MemoryCache", "MultiCache", "CacheTesting"]
        ),
    ]
)

// Settings shared by every Swift target; warnings-as-errors stays on CI's command line (unsafeFlags would
// make the package unusable as a dependency).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
