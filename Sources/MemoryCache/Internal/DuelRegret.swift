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
/// key of low count, rarely the very next miss. So a block of ``block`` won duels of which at least
/// ``threshold`` victims came back within the last ``remembered`` wins turns the margin on for
/// ``holdPerEntry`` insertions per entry of the count limit (the sketch's sample period: 10 increments
/// per entry); a cascade that starts again after the hold ends costs only the block it takes to notice it.
///
/// Measured on the trace suite (`strata-bench --filter policy-hit-ratio --hash-seeds 9`, Docs/MemoryCache.md):
/// the lowest of nine seeds on the 10,000-entry loop went from 74.91 to 81.60 (one shard) and from 79.24 to
/// 81.72 (four), loops mixed with Zipf and the trace that changes class gained up to 1.5 points at four
/// shards, and Zipf, scans and the moving popular set did not change in any figure.
///
/// A plain value stored inline in ``WindowTinyLFU``, used only under its table's lock.
@usableFromInline
struct DuelRegret {
    /// Won duels per check.
    @inlinable static var block: Int { 32 }
    /// Victims back among one block's insertions that turn the margin on: a quarter.
    @inlinable static var threshold: Int { 8 }
    /// How many of the last victims an insertion is compared with.
    @inlinable static var remembered: Int { 4 }
    /// Insertions per entry of the count limit that the margin holds after a check that found a cascade.
    @inlinable static var holdPerEntry: Int { 10 }

    /// The hashes of the last ``remembered`` victims, in a ring; 0 where none is yet.
    @usableFromInline var victims: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
    @usableFromInline var nextVictim = 0
    /// Duels won since the last check, and insertions of a remembered victim since then.
    @usableFromInline var wins = 0
    @usableFromInline var regrets = 0
    /// Insertions so far, and the insertion count until which the margin holds.
    @usableFromInline var insertions = 0
    @usableFromInline var marginUntil = 0

    @usableFromInline init() {}

    /// The uses by which a candidate must exceed its victim's estimate beyond the first: 1 while the
    /// margin holds, else 0.
    @inlinable
    var margin: Int { insertions < marginUntil ? 1 : 0 }

    /// Notes the insertion of a key with hash `hash`: a regret when a recent duel evicted it.
    @inlinable
    mutating func noteInsertion(of hash: UInt32) {
        insertions &+= 1
        if hash == victims.0 || hash == victims.1 || hash == victims.2 || hash == victims.3 {
            regrets &+= 1
        }
    }

    /// Notes a duel that a candidate won over the victim with hash `hash`, in a table whose count limit
    /// is `countLimit`; every ``block`` wins, turns the margin on if enough victims came back.
    @inlinable
    mutating func noteWin(over hash: UInt32, countLimit: Int) {
        switch nextVictim {
        case 0: victims.0 = hash
        case 1: victims.1 = hash
        case 2: victims.2 = hash
        default: victims.3 = hash
        }
        nextVictim = (nextVictim &+ 1) & (Self.remembered &- 1)
        wins &+= 1
        guard wins >= Self.block else { return }
        if regrets >= Self.threshold {
            marginUntil = insertions &+ Self.holdPerEntry &* min(countLimit, Int(Int32.max))
        }
        wins = 0
        regrets = 0
    }
}
