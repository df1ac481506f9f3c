import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Binding and reading every type through the SQLite layer, and the per-connection statement cache.
@Suite struct SQLiteStatementTests {
    let folder = TemporaryFolder(label: "sqlite")

    /// Writes one row through the layer and reads it back with a second statement.
    func roundTrip(
        _ bind: (SQLiteStatement) throws -> Void, read: (SQLiteStatement) throws -> Void
    ) throws {
        let connection = try makeConnection(folder)
        try connection.writeTransaction {
            try connection.withStatement(
                "INSERT INTO item(id, number, real, text, value) VALUES (1, ?1, ?2, ?3, ?4)"
            ) { (statement: SQLiteStatement) throws in
                try bind(statement)
                #expect(try statement.step() == false)
            }
        }
        try connection.withStatement("SELECT number, real, text, value FROM item WHERE id = 1") {
            (statement: SQLiteStatement) throws in
            #expect(try statement.step())
            try read(statement)
            #expect(try statement.step() == false)
        }
    }

    @Test(arguments: [Int64.min, -1, 0, 1, 1 << 53 + 1, Int64.max] as [Int64])
    func int64RoundTripsExactly(value: Int64) throws {
        try roundTrip({ try $0.bind(value, at: 1) }) { (statement: SQLiteStatement) throws in
            #expect(statement.columnType(at: 0) == .integer)
            #expect(statement.int64(at: 0) == value)
        }
    }

    // Not -0.0: SQLite stores a REAL with an integral value as an integer and reads back 0.0 (the engine
    // stores no negative zero).
    @Test(arguments: [-2.5, 1.0 / 3.0, -1e300, Double.leastNonzeroMagnitude, Double.infinity])
    func doubleRoundTripsBitForBit(value: Double) throws {
        try roundTrip({ try $0.bind(value, at: 2) }) { (statement: SQLiteStatement) throws in
            #expect(statement.columnType(at: 1) == .double)
            #expect(statement.double(at: 1).bitPattern == value.bitPattern)
        }
    }

    @Test(arguments: ["", "café", "cafe\u{301}", "tab\tand\0nul", String(repeating: "😀", count: 5_000)])
    func textRoundTripsWithEveryScalar(value: String) throws {
        try roundTrip({ try $0.bind(value, at: 3) }) { (statement: SQLiteStatement) throws in
            #expect(statement.columnType(at: 2) == .text)
            // Compared by scalars: Swift's == would call the composed and decomposed "café" equal.
            #expect(try statement.text(at: 2).map { Array($0.unicodeScalars) } == Array(value.unicodeScalars))
        }
    }

    @Test(arguments: [0, 1, 100, 4_124, 40_000])
    func copiedBlobRoundTripsAndEmptyIsNotNull(count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try roundTrip({ try $0.bind(bytes, at: 4) }) { (statement: SQLiteStatement) throws in
            #expect(statement.columnType(at: 3) == .blob)
            #expect(try statement.blob(at: 3) == bytes)
        }
    }

    @Test(arguments: [0, 100, 4_124, 40_000])
    func borrowedBlobRoundTripsAndIsReadWhileLent(count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }
        try bytes.withUnsafeBytes { lent in
            try roundTrip({ try $0.bind(borrowing: lent, at: 4) }) { (statement: SQLiteStatement) throws in
                #expect(statement.columnType(at: 3) == .blob)
                #expect(try statement.withBlob(at: 3) { Array($0) } == bytes)
            }
        }
    }

    @Test func nullRoundTripsInEveryColumn() throws {
        try roundTrip(
            { statement in for index in 1...4 { try statement.bindNull(at: index) } },
            read: { (statement: SQLiteStatement) throws in
                for column in 0..<4 { #expect(statement.isNull(at: column)) }
                #expect(try statement.text(at: 2) == nil)
                #expect(try statement.blob(at: 3) == nil)
                #expect(statement.int64(at: 0) == 0)
            })
    }

    @Test func bindingsDoNotLeakIntoTheNextUseOfAKeptStatement() throws {
        // Given a kept INSERT used once with a value
        let connection = try makeConnection(folder)
        let sql = "INSERT INTO item(id, number) VALUES (?1, ?2)"
        try connection.withStatement(sql) { (statement: SQLiteStatement) throws in
            try statement.bind(Int64(1), at: 1)
            try statement.bind(Int64(42), at: 2)
            _ = try statement.step()
        }
        // When it is used again binding only the id
        try connection.withStatement(sql) { (statement: SQLiteStatement) throws in
            try statement.bind(Int64(2), at: 1)
            _ = try statement.step()
        }
        // Then the second row's number is NULL, not the first use's 42
        try connection.withStatement("SELECT number FROM item WHERE id = 2") { (statement: SQLiteStatement) throws in
            #expect(try statement.step())
            #expect(statement.isNull(at: 0))
        }
    }

    @Test func keepsOneStatementPerSQLAndPreparesACopyForANestedUse() throws {
        // Given a connection with its table
        let connection = try makeConnection(folder)
        let sql = "SELECT count(*) FROM item WHERE id >= ?1"
        // When the same SQL is used nested (the kept statement is out) and then again
        let counts = try connection.withStatement(sql) { outer -> [Int64] in
            try outer.bind(Int64(0), at: 1)
            _ = try outer.step()
            let inner = try connection.withStatement(sql) { inner -> Int64 in
                #expect(inner !== outer)
                try inner.bind(Int64(0), at: 1)
                _ = try inner.step()
                return inner.int64(at: 0)
            }
            return [outer.int64(at: 0), inner]
        }
        let reused = try connection.withStatement(sql) { $0 }
        let again = try connection.withStatement(sql) { $0 }

        // Then both read, and later uses get the one kept statement
        #expect(counts == [0, 0])
        #expect(reused === again)
    }

    @Test func statementsPastTheCapacityAreCompiledPerUseAndStillWork() throws {
        // Given a connection that keeps one statement, already keeping one
        var options = SQLiteConnection.Options()
        options.statementCacheCapacity = 1
        let connection = try makeConnection(folder, options: options)
        let kept = try connection.withStatement("SELECT 1") { $0 }

        // When another SQL text is used twice
        let first = try connection.withStatement("SELECT count(*) FROM item") { statement in
            _ = try statement.step()
            return (statement, statement.int64(at: 0))
        }
        let second = try connection.withStatement("SELECT count(*) FROM item") { $0 }

        // Then it ran, was not kept (a new statement each time), and the kept one still is
        #expect(first.1 == 0)
        #expect(first.0 !== second)
        #expect(try connection.withStatement("SELECT 1") { $0 } === kept)
    }

    @Test func changesAndLastInsertRowIDDescribeTheLastStatement() throws {
        // Given three rows
        let connection = try makeConnection(folder)
        for id in [4, 9, 16] as [Int64] { try insertItem(connection, id: id, value: [1]) }
        #expect(connection.lastInsertRowID == 16)

        // When two of them are updated
        try connection.writeTransaction {
            try connection.withStatement("UPDATE item SET number = 1 WHERE id > ?1") { statement in
                try statement.bind(Int64(5), at: 1)
                _ = try statement.step()
            }
        }

        // Then the connection says two rows changed
        #expect(connection.changes == 2)
    }

    @Test func indexOutOfRangeIsASQLError() throws {
        let connection = try makeConnection(folder)
        let error = #expect(throws: SQLiteError.self) {
            try connection.withStatement("SELECT ?1") { try $0.bind(Int64(1), at: 2) }
        }
        #expect(error?.kind == .sql)
    }

    @Test func sqlThatDoesNotCompileIsASQLErrorNamingTheDatabase() throws {
        let connection = try makeConnection(folder)
        let error = #expect(throws: SQLiteError.self) {
            try connection.withStatement("SELECT * FROM missing_table") { _ in }
        }
        #expect(error?.kind == .sql)
        #expect(error?.operation == "prepare")
        #expect(error?.path == folder.database)
        #expect(error?.detail.contains("missing_table") == true)
    }
}
