/// A count-min sketch of 4-bit counters that estimates how often each key was used of late: the
/// frequency filter of TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
/// Admission Policy", ACM Transactions on Storage 13(4), 2017).
///
/// Each key updates four counters and its estimate is the smallest of them (Cormode and Muthukrishnan,
/// "An Improved Data Stream Summary: The Count-Min Sketch and its Applications", 2005), so collisions
/// can only raise an estimate. Counters saturate at 15: admission only compares frequencies, and the
/// paper shows that small counters lose almost nothing. After `sampleSize` increments every counter is
/// halved (the paper's *reset*), so the sketch describes recent use and a key popular long ago fades. A
/// halving halves the count of increments too (the halved counters stand for half of them, as in
/// Caffeine's reset), so every halving after the first comes after `sampleSize / 2` more.
///
/// The table holds one 64-bit word (16 counters) per entry the cache can hold, rounded up to a power of
/// two: 8 bytes an entry. A key's four counters all sit in one 64-byte block of eight words, so an
/// update or an estimate touches one cache line.
///
/// Hits reach the sketch through the table's hit buffer (`WindowTinyLFU.hitBuffer`), up to fifteen at a time.
///
/// Not thread-safe: it lives inside an ``ShardTable`` and is used under its lock. The owner calls
/// ``deallocate()``.
@usableFromInline
struct FrequencySketch {
    @usableFromInline var words: UnsafeMutablePointer<UInt64>
    /// The number of 8-word blocks minus one (a power of two minus one).
    @usableFromInline var blockMask: Int
    /// Increments since the last halving.
    @usableFromInline var additions = 0
    /// The increments counted when every counter is halved: 10 per entry the sketch is sized for, the
    /// sample size the TinyLFU paper uses (the first halving comes after that many, later ones after half).
    @usableFromInline var sampleSize: Int
    /// The number of entries the sketch is sized for.
    @usableFromInline var capacity: Int

    /// The largest capacity a sketch is sized for: 2^26 entries, 512 MiB of counters.
    @usableFromInline static var maximumCapacity: Int { 1 << 26 }

    /// Creates a sketch with all counters at 0, sized for `capacity` entries (at least 8).
    init(capacity: Int) {
        let wordCount = Self.wordCount(forCapacity: capacity)
        // Aligned to 64 bytes, so that each block is one cache line (the allocator's own alignment, 16
        // bytes, let most blocks straddle two lines, and an update then missed twice).
        words = UnsafeMutableRawPointer.allocate(byteCount: wordCount * 8, alignment: 64)
            .bindMemory(to: UInt64.self, capacity: wordCount)
        words.initialize(repeating: 0, count: wordCount)
        blockMask = wordCount / 8 - 1
        self.capacity = wordCount
        sampleSize = 10 * wordCount
    }

    /// A power of two of at least `capacity` and 8, at most ``maximumCapacity``.
    static func wordCount(forCapacity capacity: Int) -> Int {
        let bounded = min(max(capacity, 8), maximumCapacity)
        return 1 << (Int.bitWidth - (bounded - 1).leadingZeroBitCount)
    }

    func deallocate() {
        UnsafeMutableRawPointer(words).deallocate()
    }

    /// Where `hash`'s counter `row` (0..<4) sits: a word and the shift of its nibble.
    ///
    /// The hash is spread by a multiplication (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4) so that the
    /// block, the word in it and the nibble in the word come from independent-looking bits.
    @inlinable
    func position(of hash: UInt32, row: Int) -> (word: Int, shift: UInt64) {
        let spread = UInt64(hash) &* 0x9E37_79B9_7F4A_7C15
        let block = Int(truncatingIfNeeded: spread >> 32) & blockMask
        let word = block &* 8 &+ row &* 2 &+ Int(truncatingIfNeeded: (spread >> UInt64(row)) & 1)
        let nibble = (spread >> UInt64(8 &+ 4 &* row)) & 15
        return (word, nibble &* 4)
    }

    /// Counts one use of the key with `hash`: raises each of its four counters that is below 15, and
    /// halves every counter once `sampleSize` increments have been counted.
    ///
    /// Branch-free per counter (a saturated counter adds 0), so that a run of increments to unrelated
    /// blocks has no mispredicted branch to wait for behind each block's memory miss.
    ///
    /// - Complexity: O(1), plus O(*w*) in the sketch's words once per `sampleSize` increments.
    @inlinable
    mutating func increment(_ hash: UInt32) {
        var added: UInt64 = 0
        for row in 0..<4 {
            let (word, shift) = position(of: hash, row: row)
            let value = words[word]
            let below: UInt64 = (value >> shift) & 15 != 15 ? 1 : 0
            words[word] = value &+ below << shift
            added |= below
        }
        guard added != 0 else { return }
        additions &+= 1
        if additions >= sampleSize { halve() }
    }

    /// The first word of the block that holds `hash`'s counters. Reading it ahead of a run of increments
    /// brings the runs' blocks into the cache together, their misses overlapped, instead of one after
    /// another as each increment's dependent reads and writes reach it.
    @inlinable
    func firstWord(ofBlockFor hash: UInt32) -> UInt64 {
        words[position(of: hash, row: 0).word & ~7]
    }

    /// The estimated number of recent uses of the key with `hash` (0...15): the smallest of its counters.
    @inlinable
    func frequency(_ hash: UInt32) -> Int {
        var smallest: UInt64 = 15
        for row in 0..<4 {
            let (word, shift) = position(of: hash, row: row)
            smallest = min(smallest, (words[word] >> shift) & 15)
        }
        return Int(smallest)
    }

    /// Halves every counter (the TinyLFU reset), so that old uses weigh half as much as new ones.
    @usableFromInline
    mutating func halve() {
        for word in 0...(blockMask &* 8 &+ 7) {
            words[word] = (words[word] >> 1) & 0x7777_7777_7777_7777
        }
        additions /= 2
    }

    /// Replaces the table with an empty one sized for `capacity` entries. Used as the cache grows, so that
    /// a large limit costs memory only once it is used; the counts start again from 0.
    mutating func resize(toCapacity capacity: Int) {
        deallocate()
        self = FrequencySketch(capacity: capacity)
    }
}
