/// Remembers, approximately, the hashes of the last few thousand keys that left a region, so that a
/// later insertion of one of them can be noticed: a miss that a larger region would have turned into a
/// hit. These are the "ghost" lists of ARC (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead
/// Replacement Cache", FAST 2003), kept here as two generations of a Bloom filter (Bloom, 1970)
/// instead of lists of keys: O(1) per operation, 2 bytes per remembered key, no deletion.
///
/// A key is remembered from its insertion until two generations of `generationSize` insertions have
/// passed; false positives (about 5% at 8 bits per key and 2 probes) only add noise to a statistical
/// signal. Not thread-safe: it lives inside an ``ShardTable``. The owner calls ``deallocate()``.
@usableFromInline
struct GhostFilter {
    @usableFromInline var current: UnsafeMutablePointer<UInt64>
    @usableFromInline var previous: UnsafeMutablePointer<UInt64>
    /// Words per generation minus one (a power of two minus one).
    @usableFromInline var wordMask: Int
    @usableFromInline var insertedInGeneration = 0
    @usableFromInline var generationSize: Int

    /// Creates an empty filter that remembers at least `generationSize` keys.
    init(generationSize: Int) {
        self.generationSize = max(generationSize, 8)
        // 8 bits per key, a power of two of 64-bit words.
        let words = FrequencySketch.wordCount(forCapacity: self.generationSize / 8 + 1)
        current = .allocate(capacity: words)
        current.initialize(repeating: 0, count: words)
        previous = .allocate(capacity: words)
        previous.initialize(repeating: 0, count: words)
        wordMask = words - 1
    }

    func deallocate() {
        current.deallocate()
        previous.deallocate()
    }

    /// The two bits of `hash`: a word and two bit positions in it (one cache line per operation).
    @inlinable
    func bits(of hash: UInt32) -> (word: Int, mask: UInt64) {
        let spread = UInt64(hash) &* 0xD6E8_FEB8_6659_FD93
        let word = Int(truncatingIfNeeded: spread >> 40) & wordMask
        return (word, (1 << (spread & 63)) | (1 << ((spread >> 6) & 63)))
    }

    @inlinable
    func contains(_ hash: UInt32) -> Bool {
        let (word, mask) = bits(of: hash)
        return current[word] & mask == mask || previous[word] & mask == mask
    }

    /// Remembers `hash`, starting a new generation (forgetting the oldest) every `generationSize` keys.
    @inlinable
    mutating func insert(_ hash: UInt32) {
        let (word, mask) = bits(of: hash)
        current[word] |= mask
        insertedInGeneration &+= 1
        if insertedInGeneration >= generationSize { startGeneration() }
    }

    @usableFromInline
    mutating func startGeneration() {
        swap(&current, &previous)
        current.update(repeating: 0, count: wordMask + 1)
        insertedInGeneration = 0
    }
}
