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
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "CBenchSupport",
                .product(name: "CacheCore", package: "Strata"),
                .product(name: "MemoryCache", package: "Strata"),
                .product(name: "DiskCache", package: "Strata"),
                .product(name: "MultiCache", package: "Strata"),
            ]
        ),
    ]
)
