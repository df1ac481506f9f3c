/// The prepared statements of one connection, kept by SQL text so each is compiled once
/// (`SQLITE_PREPARE_PERSISTENT`) and reused: the engine runs a handful of fixed statements millions of times.
///
/// The lookup is a linear scan comparing SQL texts, not a hash table: the engine's statements are a dozen
/// string literals, and comparing a literal with itself is one comparison of two words (same storage),
/// with other texts of another length rejected by their counts; hashing a 60-byte SQL text on every use cost
/// more (measured: Docs/DiskEngine-SQLite.md, "Measured"). A kept statement is marked in use while lent out.
/// A nested use of the same SQL (the kept one is out) gets a second, unkept copy, finalized when it comes
/// back. Past `capacity` distinct statements, new ones are not kept (the engine's statements are a fixed set
/// far below the capacity; this only bounds a mistake such as SQL built with values in it).
///
/// Thread safety: not thread-safe; owned by its connection, which one thread uses at a time.
struct SQLiteStatementCache {
    /// How many statements are kept at most.
    let capacity: Int
    private var kept: [SQLiteStatement] = []

    /// - Parameter capacity: How many statements to keep at most (0 keeps none).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many statements are kept.
    var count: Int { kept.count }

    /// The kept statement for `sql`, now marked in use, or `nil` when there is none or it is in use.
    ///
    /// - Complexity: O(k) in the number of kept statements (at most `capacity`).
    func checkOut(_ sql: String) -> SQLiteStatement? {
        guard let statement = find(sql), !statement.isInUse else { return nil }
        statement.isInUse = true
        return statement
    }

    /// Whether a statement just prepared for `sql` should be kept: none is kept for it yet and there is room.
    ///
    /// - Complexity: O(k) in the number of kept statements.
    func shouldKeep(_ sql: String) -> Bool { kept.count < capacity && find(sql) == nil }

    /// Keeps `statement`, in use now (only when ``shouldKeep(_:)`` said so).
    mutating func keep(_ statement: SQLiteStatement) {
        statement.isInUse = true
        statement.isKept = true
        kept.append(statement)
    }

    private func find(_ sql: String) -> SQLiteStatement? {
        for statement in kept where statement.sql == sql { return statement }
        return nil
    }

    /// Takes `statement` back (already reset): a kept one becomes available, another one is finalized.
    func checkIn(_ statement: SQLiteStatement) {
        if statement.isKept {
            statement.isInUse = false
        } else {
            statement.finalize()
        }
    }

    /// Finalizes every kept statement (before the connection closes).
    mutating func finalizeAll() {
        for statement in kept { statement.finalize() }
        kept.removeAll()
    }

    /// Forgets every kept statement without finalizing it: for a connection inherited across `fork()`, whose
    /// statements must not be touched.
    mutating func abandonAll() {
        kept.removeAll()
    }
}
