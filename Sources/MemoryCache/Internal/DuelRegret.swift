/// Feedback on W-TinyLFU's admission duels: when the victims candidates beat keep coming back at once, the
/// duels are wrong, and for a while a candidate must beat its victim by two uses instead of one.
///
/// ## Why
/// On a loop over slightly more keys than the cache holds, admission can fall into a cascade
/// (Docs/MemoryCache.md, "A loop's probation cascade"): each candidate, just read, is one use ahead of
/// probation's least recently used entry, wins, and evicts it, and that victim is the loop's next request,
/// a miss whose candidate wins the same way. About one set of key hashes in fifty fell into it for several
/// sketch periods, and one seed in nine of the trace suite kept 6.4 points fewer hits on a 10,000-entry loop.
/// A fixed margin of one use ends the cascade but costs a popular set that moves, whose newcomers must be
/// admitted on the first use they are ahead; every signal tried before to tell the two apart (ghost hits by
/// region, the window's ghosts, recent admission, random admission) cost one or the other.
///
/// What tells them apart is what happens to a duel's victim. In a cascade it is requested again at once:
/// the next insertion, or one of the next few, is the key the last duel evicted. When a popular set moves,
/// the victims are the old set's keys, which are not requested again soon; on Zipf and scans a victim is a
/// key of low count, rarely the very next miss. So each insertion of a new key that is one of the last
/// ``remembered`` victims counts as a regret (a replacement of a key already held does not: a victim that came
/// back and is then updated in place came back once), and a block of ``block`` won duels with at least
/// ``threshold`` regrets turns
/// the margin on for ``holdPerEntry`` insertions per entry the table holds (the count limit, or the entries
/// the sketch is sized for when that is fewer, as in a cache limited by cost alone). That is about the
/// sketch's sample period when most requests miss, and a few periods on a loop whose requests mostly hit
/// (a period counts hits too). A cascade that starts again after the hold costs only the block it takes to
/// notice it. While a loop runs with the margin on, wins are rare and the ring keeps the same victims, which
/// the loop inserts again on each pass: the checks keep the margin on for as long as the loop lasts.
///
/// Measured on the trace suite (`strata-bench --filter policy-hit-ratio --hash-seeds 9`, Docs/MemoryCache.md):
/// the lowest of nine seeds on the 10,000-entry loop went from 74.91 to 81.60 (one shard) and from 79.24 to
/// 81.72 (four), loops mixed with Zipf and the trace that changes class gained up to 1.5 points at four
/// shards, and Zipf, scans and the moving popular set did not change in any figure. At worst (the margin
/// always on) admission is the fixed margin's, 0.4 points lower on a moving popular set.
///
/// A plain value stored inline in ``WindowTinyLFU``, used only under its table's lock.
@usableFromInline
struct DuelRegret {
    /// Won duels per check.
    @inlinable static var block: Int { 32 }
    /// Regrets in one block that turn the margin on: a quarter.
    @inlinable static var threshold: Int { 8 }
    /// How many of the last victims an insertion is compared with. Fixed at 4: the ring is a tuple.
    @inlinable static var remembered: Int { 4 }
    /// Insertions per entry the table holds that the margin lasts after a check that found a cascade.
    @inlinable static var holdPerEntry: Int { 10 }

    /// The hashes of the last ``remembered`` victims, in a ring; an entry counts only once its bit in
    /// ``remembering`` is set (so a hash of 0 needs no sentinel).
    @usableFromInline var victims: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
    /// One bit per entry of ``victims``, set when a win first stores it.
    @usableFromInline var remembering: UInt8 = 0
    /// Where the next victim goes in the ring.
    @usableFromInline var nextVictim = 0
    /// Duels won since the last check.
    @usableFromInline var wins = 0
    /// Insertions of remembered victims since the last check.
    @usableFromInline var regrets = 0
    /// Insertions left before the margin ends; 0 while it is off.
    @usableFromInline var holdLeft = 0

    @usableFromInline init() {}

    /// The uses by which a candidate must exceed its victim's estimate beyond the first: 1 while the
    /// margin holds, else 0.
    @inlinable
    var margin: Int { holdLeft > 0 ? 1 : 0 }

    /// Notes the insertion of a new key (not a replacement) with hash `hash`: a regret when it is a remembered
    /// victim; and one insertion less of the margin's hold.
    @inlinable
    mutating func noteInsertion(of hash: UInt32) {
        if holdLeft > 0 { holdLeft &-= 1 }
        var matched: UInt8 = 0
        if hash == victims.0 { matched |= 1 }
        if hash == victims.1 { matched |= 2 }
        if hash == victims.2 { matched |= 4 }
        if hash == victims.3 { matched |= 8 }
        if matched & remembering != 0 { regrets &+= 1 }
    }

    /// Notes a duel that a candidate won over the victim with hash `hash`; every ``block`` wins, turns the
    /// margin on for ``holdPerEntry`` × `entries` insertions if there were enough regrets.
    ///
    /// - Parameter entries: The entries the table holds at most: its count limit, or the entries its sketch
    ///   is sized for when fewer (at most `FrequencySketch.maximumCapacity`).
    @inlinable
    mutating func noteWin(over hash: UInt32, entries: Int) {
        switch nextVictim {
        case 0: victims.0 = hash
        case 1: victims.1 = hash
        case 2: victims.2 = hash
        default: victims.3 = hash
        }
        remembering |= UInt8(1) << UInt8(nextVictim)
        nextVictim = (nextVictim &+ 1) & (Self.remembered &- 1)
        wins &+= 1
        guard wins >= Self.block else { return }
        if regrets >= Self.threshold { holdLeft = Self.holdPerEntry &* entries }
        wins = 0
        regrets = 0
    }
}
