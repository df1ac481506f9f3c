/// ## A shard's ghosts
/// Each shard of a sharded cache sizes its own window from its own ghost hits, and sees a quarter of the
/// traffic at four shards: with ghosts that look back one window (2 entries in a 250-entry shard), its
/// ghost hits are few, and each of them moved 8 entries, 3.2% of the shard where the same step is 0.8% of
/// a 1,000-entry cache. One stray hit on the Zipf half of a loop mixed with Zipf then grew a shard's window
/// past what the loop could spare (1.68 points below the best at four shards of a 1,000-entry cache, where
/// one shard is 0.39 below), and a smaller step alone left a popular set that moves behind (third round in
/// `Docs/MemoryCache.md`). So a shard gathers more evidence and weighs each piece less: its window's ghosts
/// look back twice as far (``windowGhostWindows(inShard:)``), one ghost hit moves 3 entries
/// (``shardGhostStep``), and each further hit of a run on one side adds a whole step
/// (``shardGhostRunGrowth``) up to the same 24 entries (``shardLargestGhostStepMultiple``), so the burst of
/// hits at a change of popular set still moves the window as far, and soon. Measured on the whole trace
/// suite (four shards, median of three hash seeds; fourth round in `Docs/MemoryCache.md`): the loop mixed
/// with Zipf at 1,000 entries from 1.68 to 1.35 points below the best, the moving set there from 1.39 to
/// 1.26, no four-shard row worse; one-shard tables keep the rule they had, so their figures are unchanged.
extension WindowTinyLFU {
    /// How many windows' worth of evictions one generation of the window's ghosts holds: 1, or 2 in a shard
    /// (so a shard's window ghosts remember its last two to four windows' evictions). Measured at four
    /// shards with a shard step of 4 (`Docs/MemoryCache.md`, fourth round): 1 left a popular set that moves
    /// at 1,000 entries 1.65 points below the best, 1.5 times 1.34, 2 times 1.12; 3 times cost a loop mixed
    /// with Zipf there 0.17 points more than 2 and missed its target.
    static func windowGhostWindows(inShard: Bool) -> Int { inShard ? 2 : 1 }

    /// The entries one ghost hit moves in a shard, before a run multiplies it: 3, three eighths of
    /// ``ghostStep`` (and at most ``largestGhostStepShare`` of the shard's entries, as in any table).
    /// Measured with the rest of the shard rule: 4 kept a popular set that moves at 1,000 entries 0.14
    /// points closer to the best and cost a loop mixed with Zipf there 0.07 and a loop 0.29; 5, 6 and 8
    /// (with the one-shard run growth) missed one of those two targets.
    static var shardGhostStep: Double { 3 }

    /// What each further ghost hit of a run adds to a shard's step multiple: a whole step, so that a run of
    /// hits reaches 24 entries at its eighth hit (a one-shard table's 8 entries plus a quarter step per hit
    /// reach it at the ninth).
    static var shardGhostRunGrowth: Double { 1 }

    /// The largest multiple of ``shardGhostStep`` a run reaches in a shard: 8, the same 24 entries' worth as
    /// a one-shard table's largest step.
    static var shardLargestGhostStepMultiple: Double { 8 }
}
