#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A failed SQLite call (or a check the SQLite layer makes before calling SQLite), sorted into what the disk
/// engine must do about it.
///
/// The engine above reads ``kind``: a ``Kind/corrupt`` database is quarantined and recreated (it is a
/// cache); ``Kind/busy``, ``Kind/io`` and the other passing kinds are reported and retried later, never
/// deleted; ``Kind/full`` becomes `CacheError.outOfSpace` naming the path. ``cacheError`` is the public error
/// for each (SQLiteError+CacheError.swift); Docs/DiskEngine-SQLite.md has the table.
///
/// Thread safety: a value type; `Sendable`.
struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// What the engine must do about a failure; one case per distinct reaction, not per result code.
    enum Kind: Sendable, Equatable {
        /// `SQLITE_CORRUPT` or `SQLITE_NOTADB`: the file is damaged or is not a database. Quarantine it.
        case corrupt
        /// `SQLITE_BUSY` or `SQLITE_LOCKED`: another connection held a lock past the busy timeout. Passing.
        case busy
        /// `SQLITE_FULL`, or an I/O error whose `errno` is `ENOSPC` or `EDQUOT`: the volume or quota is full.
        case full
        /// `SQLITE_READONLY…`, or an open or I/O error whose `errno` is `EROFS`: nothing may be written here.
        case readOnly
        /// `SQLITE_PERM`, `SQLITE_AUTH`, or an open or I/O error whose `errno` is `EACCES` or `EPERM`.
        case permissionDenied
        /// `SQLITE_CANTOPEN` for any other reason (a missing folder, a folder where the file belongs).
        case cannotOpen
        /// `SQLITE_IOERR…`, `SQLITE_NOMEM`, `SQLITE_PROTOCOL` and the rest: passing, report and retry.
        case io
        /// `SQLITE_TOOBIG`: a value over SQLite's length limit (1,000,000,000 bytes by default).
        case tooBig
        /// `SQLITE_CONSTRAINT…`: a `UNIQUE`, `CHECK` or `NOT NULL` constraint refused the change.
        case constraint
        /// `SQLITE_ERROR`, `SQLITE_MISUSE`, `SQLITE_RANGE`: SQL that does not fit the database (a missing
        /// table in a foreign file) or a programming error in the engine.
        case sql
        /// The database, its `-wal` or its `-shm` is a link, FIFO, folder or device (checked before SQLite
        /// opens it, so a FIFO can never block the open). ``detail`` names what was found.
        case notRegularFile
        /// The connection was opened before this process was forked from its opener: it is refused, and it
        /// is never closed either (sqlite.org/howtocorrupt.html, "Carrying an open database connection across
        /// a fork()"). Open a new connection.
        case inheritedAcrossFork
        /// The connection was closed.
        case closed
    }

    /// What the engine must do about it.
    var kind: Kind
    /// SQLite's extended result code (`SQLITE_IOERR_WRITE`…), or `SQLITE_MISUSE` for the layer's own checks.
    var resultCode: Int32
    /// The `errno` of the system call behind an I/O or open error (`sqlite3_system_errno`), 0 when none.
    var systemErrno: Int32
    /// What was being done, as a verb phrase: "open", "prepare", "step", "begin a write transaction"….
    var operation: String
    /// The database file (the `-wal` or `-shm` file for ``Kind/notRegularFile`` found there).
    var path: String
    /// SQLite's message (`sqlite3_errmsg`) or the layer's own.
    var detail: String

    /// SQLite's primary result code (the low byte of ``resultCode``): `SQLITE_IOERR` for `SQLITE_IOERR_WRITE`.
    var primaryCode: Int32 { resultCode & 0xFF }

    /// Whether the database itself is damaged (the engine quarantines it); every other kind leaves the file.
    var isCorrupt: Bool { kind == .corrupt }

    /// `cannot step SQLite database: disk I/O error (SQLITE_IOERR_WRITE 778, errno 5; path: …)`.
    var description: String {
        var text = "cannot \(operation) SQLite database: \(detail) (result code \(resultCode)"
        if systemErrno != 0 { text += ", errno \(systemErrno)" }
        return text + "; path: \(path))"
    }

    /// An error of the layer itself, not of an SQLite call.
    init(_ kind: Kind, operation: String, path: String, detail: String) {
        self.kind = kind
        resultCode = SQLITE_MISUSE
        systemErrno = 0
        self.operation = operation
        self.path = path
        self.detail = detail
    }

    /// The error SQLite reported for `resultCode` on `database` (its message and `errno` are read from the
    /// connection, so build this right after the failing call, on the thread that made it).
    ///
    /// - Parameters:
    ///   - resultCode: What the call returned (extended codes are on for every connection of this layer).
    ///   - database: The connection, or `nil` when there is none (then the message is `sqlite3_errstr`'s).
    init(resultCode: Int32, database: OpaquePointer?, operation: String, path: String) {
        self.resultCode = resultCode
        self.operation = operation
        self.path = path
        if let database {
            // The connection's message describes its most recent failure, which is this one.
            detail = String(cString: sqlite3_errmsg(database))
            systemErrno = sqlite3_system_errno(database)
        } else {
            detail = String(cString: sqlite3_errstr(resultCode))
            systemErrno = 0
        }
        kind = Self.kind(resultCode: resultCode, systemErrno: systemErrno)
    }

    /// Finds why a database could not be created: SQLite retries a failed read-write open read-only, so the
    /// `errno` it keeps is the retry's `ENOENT`, not the `EROFS` or `EACCES` that refused the creation. Asks
    /// the folder itself (`access(W_OK)`), and when it refuses writing, takes that `errno` and kind.
    mutating func explainCreationFailure() {
        let folder = FileSystem.parentPath(of: path)
        guard access(folder.isEmpty ? "." : folder, W_OK) != 0 else { return }
        let reason = errno
        let kind = Self.kind(resultCode: resultCode, systemErrno: reason)
        guard kind == .readOnly || kind == .permissionDenied else { return }
        systemErrno = reason
        self.kind = kind
    }

    /// Sorts a result code (and the `errno` behind it) into a ``Kind``.
    ///
    /// An `errno` decides first for I/O and open errors, because SQLite reports a full disk during a write
    /// as `SQLITE_IOERR_WRITE` as often as `SQLITE_FULL`, and a read-only file system at open as
    /// `SQLITE_CANTOPEN`.
    static func kind(resultCode: Int32, systemErrno: Int32) -> Kind {
        let primary = resultCode & 0xFF
        if primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN || primary == SQLITE_FULL {
            switch systemErrno {
            case ENOSPC, EDQUOT: return .full
            case EROFS: return .readOnly
            case EACCES, EPERM: return .permissionDenied
            default: break
            }
        }
        switch primary {
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .full
        case SQLITE_READONLY: return .readOnly
        case SQLITE_PERM, SQLITE_AUTH: return .permissionDenied
        case SQLITE_CANTOPEN: return .cannotOpen
        case SQLITE_TOOBIG: return .tooBig
        case SQLITE_CONSTRAINT: return .constraint
        case SQLITE_ERROR, SQLITE_MISUSE, SQLITE_RANGE: return .sql
        default: return .io
        }
    }
}
