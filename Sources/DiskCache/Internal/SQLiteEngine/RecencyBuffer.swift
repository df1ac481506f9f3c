/// The accesses hits noted and the SQLite engine has not written yet (row name → milliseconds since 1970),
/// found by the first 64 bits of the name: a hit then costs the hash of one integer, not of a 64-character
/// name (measured: about a sixth of a get that hit an entry noted before).
///
/// Two names sharing their first 64 bits share a slot, so the later access replaces the earlier one; the
/// earlier row then keeps its older stored access (its recency lags, as after a crash), never takes another's.
///
/// Thread safety: a value type; the engine keeps it under its state lock.
struct RecencyBuffer {
    private var accesses: [UInt64: (name: String, accessed: Int64)] = [:]

    var count: Int { accesses.count }
    var isEmpty: Bool { accesses.isEmpty }

    /// Notes that the row `name` was read at `accessed`.
    mutating func note(_ name: String, at accessed: Int64) {
        accesses[Self.slot(of: name)] = (name, accessed)
    }

    /// Every noted access, emptying the buffer.
    mutating func takeAll() -> [(name: String, accessed: Int64)] {
        defer { accesses = [:] }
        return Array(accesses.values)
    }

    /// At most `limit` noted accesses (any of them), removed from the buffer.
    ///
    /// - Complexity: O(*k*) for the *k* accesses taken; O(*n*) when it takes all *n*.
    mutating func take(atMost limit: Int) -> [(name: String, accessed: Int64)] {
        guard accesses.count > limit else { return takeAll() }
        let taken = accesses.prefix(limit)
        let result = taken.map(\.value)
        for slot in taken.map(\.key) { accesses.removeValue(forKey: slot) }
        return result
    }

    /// The first 16 hex digits of `name` as an integer (any other byte counts as some digit: the slot only
    /// spreads names, it never decides what matches).
    static func slot(of name: String) -> UInt64 {
        var value: UInt64 = 0
        var digits = 0
        // Stops at 16 digits: a `where` clause would still walk all 64 (about 1,800 instructions a hit).
        for byte in name.utf8 {
            guard digits < 16 else { break }
            let digit = byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : byte &- UInt8(ascii: "a") &+ 10
            value = value << 4 | UInt64(digit & 0xF)
            digits += 1
        }
        return value
    }
}
