import DiskCache
import Foundation

/// Stores and data shared by the disk scenarios.
enum DiskFixture {
    /// A fixed 256-bit master key: the benchmark measures the cipher's cost, not key management, and a
    /// fixed key keeps stores reopenable within a run.
    static let masterKey = Data((0..<32).map { UInt8($0 &* 7 &+ 1) })

    /// Opens an encrypted DiskCache for `Data` values in `directory`, with no size limit unless `byteLimit`,
    /// on `engine`.
    ///
    /// The engine has no default: `.automatic` creates SQLite stores since issue 24, and a row must keep
    /// measuring the engine its history and its baseline were recorded on.
    static func openCache(
        in directory: URL,
        byteLimit: Int? = nil,
        durability: DiskCacheConfiguration.Durability = .none,
        engine: DiskCacheConfiguration.Engine
    ) throws -> DiskCache<String, Data> {
        let configuration = DiskCacheConfiguration(
            name: "strata-bench",
            directory: directory,
            byteLimit: byteLimit,
            durability: durability,
            masterKeySource: .masterKey(masterKey),
            engine: engine
        )
        return try DiskCache(configuration: configuration, codec: .data)
    }

    /// `count` seeded pseudo-random bytes (incompressible, like the encrypted files they become).
    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        let data = Data(bytes.prefix(count))
        return data
    }

    /// Plain-file names for the baseline: the key itself (the keys used here are file-name safe).
    static func keys(_ count: Int, prefix: String = "key") -> [String] {
        (0..<count).map { "\(prefix)-\($0)" }
    }
}
