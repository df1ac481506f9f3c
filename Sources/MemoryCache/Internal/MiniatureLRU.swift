/// A miniature simulation of an LRU cache the size of a W-TinyLFU table, run on a sample of its requests,
/// so that the table can tell when plain recency would have kept more hits than its own policy.
///
/// ## Why
/// The window of ``WindowTinyLFU`` grows on window ghost hits, which look back only one to two windows,
/// so that a loop larger than the cache cannot grow it to where a loop gets nothing. Traffic where only
/// recency pays defeats that: a working set that fits the cache and slides, or keys each used a few times
/// within about one cache size of requests. Their new keys lose every admission duel to dead keys used more
/// often, and come back later than the window's ghosts remember, so the window stays at its smallest:
/// 29–31% hits against LRU's 73% on a working set that slides, 3.5–4.3% against 67% on keys reused within a
/// cache size (the trace suite's `sliding` and `reuse`, Docs/MemoryCache.md).
/// A ghost cannot tell such a return from a loop's; what tells them apart is whether recency would pay,
/// and that is what this simulation measures.
///
/// ## How
/// Spatial sampling by key hash, as in SHARDS (Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC
/// Construction with SHARDS", FAST 2015), with a scaled-down cache, as in miniature simulations
/// (Waldspurger, Saemundsson, Ahmad and Park, "Cache Modeling and Optimization using Miniature
/// Simulations", USENIX ATC 2017): a key is sampled when its hash falls in the first 1/*R* of the hash
/// space, and the sampled keys run through an exact LRU cache of about 1/*R* of the table's limits. Its hit
/// ratio estimates the hit ratio LRU would have on the whole traffic. The table counts its own hits on the
/// same sampled requests, so the two are compared on the very same requests.
///
/// *R* is a power of two chosen so that the miniature holds 32 to 63 entries (every key below 64
/// entries), or about 1/16 of the table's when that is more, up to about 512 (``mostEntries``): at 1,000
/// entries one hit in sixteen pays for a probe of a small table and a relink, at 100,000 one in 256. A
/// miniature of at least 128 entries sampled one hit in four at 1,000 entries and cost a hit 1.8–2.1× an
/// LRU hit at 200 to 1,000 entries instead of 1.65×; with 32 entries at most at every size, a 10,000-entry
/// table sampled one key in 256 and needed 26 cache sizes of requests per check (Docs/MemoryCache.md).
/// Its storage is fixed, at most about 40 KiB: it holds at most ``maximumEntriesFactor`` times the entries
/// it scales to (plus 16), and evicts its least recently used entry past that, whatever its limits.
///
/// **The limits follow the keys the table holds.** With a fixed 1/*R* of the table's limits, the number
/// of sampled keys among those a workload cycles through varies by chance (a loop over 1,200 keys at
/// 1,000 entries samples 75 ± 9 of them at *R* = 16): when fewer than the miniature holds are sampled,
/// the miniature hits every request of a loop that LRU would miss entirely, and the check grew the window
/// where a loop gets nothing (found by `DuelRegretTests`, whose lowest hash set fell from 81% to 71%). The
/// miniature's limits are instead the sampled keys the table holds (their count and cost) plus 1/*R* of
/// its free room: of the keys the table holds, as many are sampled as an LRU cache of its size would
/// hold in the sample.
///
/// A plain value stored inline in ``WindowTinyLFU``, used only under its table's lock; the owner calls
/// ``deallocate()``.
@usableFromInline
struct MiniatureLRU {
    /// Sampled when `hash × samplingMultiplier` (32 bits) is below this: 2^32 / *R*.
    @usableFromInline let samplingBound: UInt64
    /// *R*: one key in this many is sampled.
    @usableFromInline let rate: Int
    /// The table's entries scaled down by *R*: what the miniature holds, on average, when full of entries of
    /// cost 1.
    @usableFromInline let entries: Int
    /// Per node: the key's hash, its cost, and its neighbours in recency order (`-1` for none; a free
    /// node's `older` links the free list).
    @usableFromInline let hashes: UnsafeMutablePointer<UInt32>
    @usableFromInline let costs: UnsafeMutablePointer<Int>
    @usableFromInline let newer: UnsafeMutablePointer<Int32>
    @usableFromInline let older: UnsafeMutablePointer<Int32>
    @usableFromInline let nodeCapacity: Int
    /// Open addressing with linear probing: node index + 1, or 0 for an empty bucket.
    @usableFromInline let buckets: UnsafeMutablePointer<Int32>
    @usableFromInline let bucketMask: Int
    @usableFromInline var newest: Int32 = -1
    @usableFromInline var oldest: Int32 = -1
    @usableFromInline var freeHead: Int32 = 0
    @usableFromInline var count = 0
    @usableFromInline var totalCost = 0

    /// The fewest entries a miniature aims to hold: 32 (so 32 to 63).
    static var targetEntries: Int { 32 }

    /// The largest *R* for a miniature of at most ``mostEntries`` entries: 16.
    static var largestRateUpToMostEntries: Int { 16 }

    /// The most entries a miniature aims to hold: 512.
    static var mostEntries: Int { 512 }

    /// How many times the entries it scales to a miniature holds at most: twice, enough for the chance
    /// excess of sampled keys among those the table holds (about 3 standard deviations at 32 entries are
    /// 17 more), and for entries of less than the average cost under a cost limit.
    static var maximumEntriesFactor: Int { 2 }

    /// Spreads the hash's bits before sampling, so that the sample does not follow the bits a shard or
    /// the sketch picks by (Knuth's multiplicative constant for 32 bits).
    @inlinable static var samplingMultiplier: UInt32 { 0x9E37_79B1 }

    /// Creates an empty miniature of a table of `entries` entries (the count limit, or the entries the sketch
    /// is sized for under a cost limit alone).
    init(entries: Int) {
        var rate = 1
        while entries / (rate * 2) >= Self.targetEntries
            && (rate * 2 <= Self.largestRateUpToMostEntries || entries / rate > Self.mostEntries)
        {
            rate *= 2
        }
        self.rate = rate
        samplingBound = (UInt64(1) << 32) / UInt64(rate)
        self.entries = max(entries / rate, 1)
        nodeCapacity = self.entries * Self.maximumEntriesFactor + 16
        hashes = .allocate(capacity: nodeCapacity)
        costs = .allocate(capacity: nodeCapacity)
        newer = .allocate(capacity: nodeCapacity)
        older = .allocate(capacity: nodeCapacity)
        for node in 0..<nodeCapacity { older[node] = Int32(node + 1 < nodeCapacity ? node + 1 : -1) }
        var bucketCount = 16
        while bucketCount < 2 * nodeCapacity { bucketCount *= 2 }
        buckets = .allocate(capacity: bucketCount)
        buckets.initialize(repeating: 0, count: bucketCount)
        bucketMask = bucketCount - 1
    }

    func deallocate() {
        hashes.deallocate()
        costs.deallocate()
        newer.deallocate()
        older.deallocate()
        buckets.deallocate()
    }

    /// Whether requests for keys with hash `hash` are in the sample.
    @inlinable
    func samples(_ hash: UInt32) -> Bool {
        UInt64(hash &* Self.samplingMultiplier) < samplingBound
    }

    /// Runs a sampled request for the key with hash `hash` and cost `cost` through the miniature, whose
    /// limits are now `countLimit` entries and `costLimit` (`Int.max` for none).
    ///
    /// - Returns: Whether it hit.
    @usableFromInline
    mutating func access(_ hash: UInt32, cost: Int, countLimit: Int, costLimit: Int) -> Bool {
        if let node = find(hash) {
            moveToNewest(node)
            // The limits shrink when the table's held keys change; a miniature that only hits must shrink too
            // (one that kept a loop's sampled keys from before the table filled hit all of them for good).
            while count > 0 && (count > countLimit || totalCost > costLimit) { remove(oldest) }
            return true
        }
        guard cost <= costLimit else { return false }
        // Room for the cost first: the total then never exceeds a limit that may be near Int.max.
        while count > 0 && totalCost > costLimit - cost { remove(oldest) }
        if freeHead < 0 { remove(oldest) }
        let node = freeHead
        freeHead = older[Int(node)]
        hashes[Int(node)] = hash
        costs[Int(node)] = cost
        insertBucket(hash, node: node)
        pushNewest(node)
        count += 1
        totalCost += cost
        while count > 0 && (count > countLimit || totalCost > costLimit) {
            remove(oldest)
        }
        return false
    }

    /// Evicts least recently used entries until at most `count` entries of total cost at most `cost` remain:
    /// what an LRU cache trimmed as the table was would keep.
    ///
    /// - Complexity: O(*k*) in the entries evicted.
    @usableFromInline
    mutating func trim(toCount count: Int, cost: Int) {
        while self.count > 0 && (self.count > count || totalCost > cost) { remove(oldest) }
    }

    /// Forgets the key with hash `hash`, if held (a key removed from the table, not evicted by it).
    @usableFromInline
    mutating func forget(_ hash: UInt32) {
        if let node = find(hash) { remove(node) }
    }

    // MARK: - Internals

    /// The first bucket probed for `hash`: another multiplicative hash (the sampled keys all have small
    /// products with ``samplingMultiplier``), reduced to the bucket count by multiplying and shifting.
    func home(of hash: UInt32) -> Int {
        Int((UInt64(hash &* 0x85EB_CA6B) &* UInt64(bucketMask + 1)) >> 32)
    }

    func find(_ hash: UInt32) -> Int32? {
        var bucket = home(of: hash)
        while buckets[bucket] != 0 {
            let node = buckets[bucket] - 1
            if hashes[Int(node)] == hash { return node }
            bucket = (bucket + 1) & bucketMask
        }
        return nil
    }

    func insertBucket(_ hash: UInt32, node: Int32) {
        var bucket = home(of: hash)
        while buckets[bucket] != 0 { bucket = (bucket + 1) & bucketMask }
        buckets[bucket] = node + 1
    }

    /// Removes `node` from its bucket, shifting later buckets of its probe run back so that no lookup
    /// stops early (deletion without tombstones for linear probing, Knuth's Algorithm R).
    func removeBucket(of node: Int32) {
        var hole = home(of: hashes[Int(node)])
        while buckets[hole] != node + 1 { hole = (hole + 1) & bucketMask }
        var next = (hole + 1) & bucketMask
        while buckets[next] != 0 {
            let home = home(of: hashes[Int(buckets[next] - 1)])
            // Move the entry back into the hole unless its home lies cyclically in (hole, next].
            if (next - home) & bucketMask >= (next - hole) & bucketMask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & bucketMask
        }
        buckets[hole] = 0
    }

    mutating func remove(_ node: Int32) {
        removeBucket(of: node)
        unlink(node)
        count -= 1
        totalCost -= costs[Int(node)]
        older[Int(node)] = freeHead
        freeHead = node
    }

    mutating func moveToNewest(_ node: Int32) {
        unlink(node)
        pushNewest(node)
    }

    mutating func unlink(_ node: Int32) {
        let (toNewer, toOlder) = (newer[Int(node)], older[Int(node)])
        if toNewer >= 0 { older[Int(toNewer)] = toOlder } else { newest = toOlder }
        if toOlder >= 0 { newer[Int(toOlder)] = toNewer } else { oldest = toNewer }
    }

    mutating func pushNewest(_ node: Int32) {
        newer[Int(node)] = -1
        older[Int(node)] = newest
        if newest >= 0 { newer[Int(newest)] = node } else { oldest = node }
        newest = node
    }
}
