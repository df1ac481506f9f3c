/// A small seeded pseudo-random generator (SplitMix64, Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014), so that every run replays the same keys and traces.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

extension Array where Element == Int {
    /// `0..<count` in a seeded random order.
    static func shuffledIndices(_ count: Int, seed: UInt64) -> [Int] {
        var generator = SplitMix64(seed: seed)
        return Array(0..<count).shuffled(using: &generator)
    }

    /// `count` indices drawn uniformly from `0..<bound`, seeded.
    static func randomIndices(_ count: Int, below bound: Int, seed: UInt64) -> [Int] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in Int.random(in: 0..<bound, using: &generator) }
    }
}
