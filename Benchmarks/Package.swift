// swift-tools-version:6.0
import PackageDescription

// A separate package so that the root manifest stays free of benchmark-only targets; it depends on
// the root package by path and builds against Strata's public library products only.
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The explicit name lets `.product(package:)` say "Strata" whatever the checkout's folder is called.
        .package(name: "Strata", path: "..")
    ],
    targets: [
        // glibc malloc statistics for the memory-overhead scenario (not exported by Swift's Glibc module).
        .target(name: "CBenchSupport"),
        // The system libcrypto (found with pkg-config), for the floor measurement only. Named apart from the
        // root package's COpenSSL because module names must be unique across the package graph.
        .systemLibrary(
            name: "CBenchOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The system SQLite (pkg-config), for the sealed-row floor only; named apart from the root package's CSQLite.
        .systemLibrary(
            name: "CBenchSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The cryptography any AES-256-GCM-encrypted cache must do, called straight through libcrypto's EVP
        // interface, alone (the file floor) and under SQLite's rows (the sealed-row floor): the "floor" figures
        // printed beside the disk rows. Linux only; elsewhere the floors are skipped.
        .target(
            name: "CBenchFloor",
            dependencies: [
                .target(name: "CBenchOpenSSL", condition: .when(platforms: [.linux])),
                .target(name: "CBenchSQLite", condition: .when(platforms: [.linux])),
            ]
        ),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "CBenchSupport",
                .target(name: "CBenchFloor", condition: .when(platforms: [.linux])),
                .product(name: "CacheCore", package: "Strata"),
                .product(name: "MemoryCache", package: "Strata"),
                .product(name: "DiskCache", package: "Strata"),
                .product(name: "MultiCache", package: "Strata"),
                .product(name: "RedisCache", package: "Strata"),
            ]
        ),
        // A fixed amount of Redis-tier work, for counting instructions per request under callgrind.
        .executableTarget(
            name: "redis-request-cost",
            dependencies: [
                .product(name: "CacheCore", package: "Strata"),
                .product(name: "RedisCache", package: "Strata"),
            ]
        ),
    ]
)
