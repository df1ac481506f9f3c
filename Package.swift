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
        .library(name: "RedisCache", targets: ["RedisCache"]),
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
        // The sealed-record kernel (Docs/Overview.md, "The sealed-record kernel"): the tag block and its one tag
        // rule, the associated-data builder and the one liveness verdict that DiskCache and RedisCache share. In
        // no product: its declarations are `package`.
        .target(name: "SealedRecord", dependencies: ["CacheCore", "CacheCrypto"]),
        // The system SQLite for DiskCache's SQLite engine (Docs/DiskEngine-SQLite.md): Linux only; Apple
        // platforms import the SDK's SQLite3 module.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "DiskCache",
            dependencies: [
                "CacheCore", "CacheCrypto", "SealedRecord",
                .target(name: "CSQLite", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "MultiCache", dependencies: ["CacheCore"]),
        // The Redis connection layer (Docs/RedisCache.md, "Modules"): RESP3 encoding and decoding, the socket and TLS,
        // the I/O thread with its deadlines, reconnects and keep-alive, the pool and the circuit breaker. In no
        // product: its declarations are `package`, and what users see of it is RedisCache's public API.
        // libssl for the connection layer's TLS (Linux), beside libcrypto: a target of its own so that CacheCrypto
        // stays the one module on libcrypto alone and only RedisConnection links libssl.
        .systemLibrary(
            name: "COpenSSLTLS",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "RedisConnection",
            dependencies: ["CacheCore", .target(name: "COpenSSLTLS", condition: .when(platforms: [.linux]))]
        ),
        // The Redis tier (Docs/RedisCache.md): sealed envelopes, epochs, tags and tracking over the connection
        // layer; no outside packages.
        .target(name: "RedisCache", dependencies: ["CacheCore", "CacheCrypto", "RedisConnection", "SealedRecord"]),
        .target(name: "CacheTesting", dependencies: ["CacheCore"]),
        // What the test targets and the reliability tools share (seeded generator, temporary folders, the
        // history oracle, the stress knob, gates, hostile items, mounts); in no product, like
        // swift-collections' _CollectionsTestSupport.
        .target(name: "StrataTestSupport", dependencies: ["CacheCore"], path: "Tests/StrataTestSupport"),
        // The umbrella: `import Strata` re-exports the cache modules and CacheCrypto.
        .target(
            name: "Strata",
            dependencies: ["CacheCore", "CacheCrypto", "MemoryCache", "DiskCache", "MultiCache", "RedisCache"]),
        .executableTarget(
            name: "strata",
            dependencies: ["CacheCore", "CacheCrypto", "DiskCache", "MultiCache", "RedisCache"]
        ),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore", "CacheTesting", "StrataTestSupport"]),
        .testTarget(
            name: "CacheCryptoTests",
            dependencies: ["CacheCrypto", "StrataTestSupport", "strata-exit-probe"],
            resources: [.copy("Resources")]
        ),
        // The child of the exit tests (OpenSSLExitTests): threads inside OpenSSL while the process exits.
        .executableTarget(
            name: "strata-exit-probe",
            dependencies: [
                "CacheCrypto", "RedisConnection", .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/ExitProbe"
        ),
        .testTarget(name: "SealedRecordTests", dependencies: ["SealedRecord", "CacheCore", "StrataTestSupport"]),
        .testTarget(name: "MemoryCacheTests", dependencies: ["MemoryCache", "CacheTesting", "StrataTestSupport"]),
        .testTarget(
            name: "DiskCacheTests",
            dependencies: ["DiskCache", "CacheTesting", "SealedRecord", "StrataTestSupport"]
        ),
        .testTarget(
            name: "MultiCacheTests",
            dependencies: ["MultiCache", "MemoryCache", "DiskCache", "CacheTesting", "StrataTestSupport"]
        ),
        .testTarget(
            name: "RedisCacheTests",
            dependencies: [
                "RedisCache", "RedisConnection", "MemoryCache", "DiskCache", "MultiCache", "CacheTesting",
                "StrataTestSupport", "strata-invalidation-peer",
            ]
        ),
        // The second process of the two-process invalidation tests: a MultiCache([memory, redis]) driven
        // through standard input.
        .executableTarget(
            name: "strata-invalidation-peer",
            dependencies: ["CacheCore", "MemoryCache", "MultiCache", "RedisCache"],
            path: "Tests/InvalidationPeer"
        ),
        .testTarget(name: "CacheTestingTests", dependencies: ["CacheTesting", "StrataTestSupport"]),
        .testTarget(name: "StrataCLITests", dependencies: ["strata", "StrataTestSupport"]),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataTestSupport"]),
        // Concurrency tests: many tasks racing on MemoryCache, DiskCache and MultiCache, run under ThreadSanitizer.
        .testTarget(
            name: "ConcurrencyTests",
            dependencies: [
                "CacheCore", "MemoryCache", "DiskCache", "MultiCache", "CacheTesting", "StrataTestSupport",
            ]
        ),
        // Reliability tools (Docs/Reliability.md): the process-level scenarios and the decoder fuzzer, run by
        // the scripts in Tests/Reliability.
        .executableTarget(
            name: "StrataTorture",
            dependencies: [
                "CacheCore", "DiskCache", "StrataTestSupport",
                // Raw reads of a SQLite store's database (integrity_check, totals), independent of the engine.
                .target(name: "CSQLite", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/Reliability/Torture"
        ),
        .executableTarget(
            name: "StrataFuzz", dependencies: ["DiskCache", "RedisConnection"], path: "Tests/Reliability/Fuzz"),
    ]
)

// Settings shared by every Swift target; warnings-as-errors stays on CI's command line (unsafeFlags would
// make the package unusable as a dependency).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
