/// The Lua scripts of the load fence and the lease. Each touches only keys of one entry's slot (the entry,
/// its removal counter `…:r:{<MAC>}`, its lease `…:l:{<MAC>}`), so each is one `EVAL` on a cluster too.
/// Outside the generic class: a generic type cannot hold static stored properties.
enum LoadFenceScripts {
    /// Removes the entry `KEYS[1]` and advances its removal counter `KEYS[2]` (or creates it at the fresh
    /// base `ARGV[1]`), giving the counter `ARGV[2]` ms to live, in one atomic step.
    static let remove = Array(
        """
        redis.call('UNLINK', KEYS[1])
        if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
          redis.call('INCR', KEYS[2])
          redis.call('PEXPIRE', KEYS[2], ARGV[2])
        end
        return 1
        """.utf8)

    /// Returns the removal counter `KEYS[1]`, first creating it at the fresh base `ARGV[1]` when it is missing
    /// (a stamp is taken only from a counter that exists), and gives it `ARGV[2]` ms to live. Read back with
    /// `GET`: Lua carries integers as doubles.
    static let ticket = Array(
        """
        if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return redis.call('GET', KEYS[1])
        """.utf8)

    /// Stores `ARGV[2]` under `KEYS[1]` for `ARGV[3]` ms only while the removal counter `KEYS[2]` still holds
    /// `ARGV[1]`; returns 1 when it stored, 0 when not. A missing counter matches nothing: a counter lost
    /// since the ticket refuses, never lets a write through.
    static let fencedStore = Array(
        """
        if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
        redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
        return 1
        """.utf8)

    /// ``fencedStore``, then gives up this process's lease `KEYS[3]` (held while it holds the token `ARGV[4]`),
    /// stored or not: the load that took the lease pays no round trip of its own to release it. The three keys
    /// share the entry's slot.
    static let fencedStoreReleasing = Array(
        """
        local stored = 0
        if redis.call('GET', KEYS[2]) == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
          stored = 1
        end
        if redis.call('GET', KEYS[3]) == ARGV[4] then redis.call('DEL', KEYS[3]) end
        return stored
        """.utf8)

    /// Takes the lease `KEYS[1]` (token `ARGV[1]`, `ARGV[2]` ms) unless it is held or the entry `KEYS[2]`
    /// exists, and reads the entry's removal counter `KEYS[3]` as ``ticket`` does (created at `ARGV[3]` when
    /// missing, given `ARGV[4]` ms to live): returns `{1, counter}` when taken, `{0, counter}` when held,
    /// `{2, counter}` when the entry exists. The load that took the lease needs that counter for its ticket
    /// next, so the lease costs it no round trip of its own. The three keys share the entry's slot.
    static let acquireWithTicket = Array(
        """
        local counter = ARGV[3]
        if not redis.call('SET', KEYS[3], ARGV[3], 'NX', 'PX', ARGV[4]) then
          redis.call('PEXPIRE', KEYS[3], ARGV[4])
          counter = redis.call('GET', KEYS[3])
        end
        if redis.call('EXISTS', KEYS[2]) == 1 then return {2, counter} end
        if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, counter} end
        return {0, counter}
        """.utf8)

    /// Deletes the lease `KEYS[1]` only while it still holds the token `ARGV[1]`: a holder whose lease expired
    /// and was taken by another never removes the new holder's. Returns 1 when it deleted, 0 when not.
    static let release = Array(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """.utf8)
}
