// Stand-in for the Apple SDK's `SQLite3` module (usr/include/sqlite3.h, module map `module SQLite3 [system]`),
// for the Darwin type-check (.ci/darwin-typecheck.sh) only: DiskCache's SQLite layer imports it on Apple platforms
// (Docs/DiskEngine-SQLite.md) and `CSQLite`, the same C API from Debian's libsqlite3-dev, on Linux.
//
// Where the signatures come from: SQLite's C interface is one header, the same C prototypes in every build
// (https://sqlite.org/c3ref/intro.html, each function's page cited beside it); Apple's copy adds only
// availability annotations, all older than the package's minimums (macOS 13 ships SQLite 3.39, iOS 16 3.39;
// the newest function used here, `sqlite3_prepare_v3`, is SQLite 3.20, macOS 10.14 / iOS 12). Each Swift line
// below is what Swift's importer makes of that prototype (`swift-synthesize-interface` on sqlite3.h, copied
// without change); the bodies are never run. Only what Sources/ uses is declared, so a call of anything else
// fails this check until it is added here with its citation. C macros that Swift does not import
// (`SQLITE_STATIC`, `SQLITE_TRANSIENT`) are not declared: Swift code cannot name them on Apple platforms either.
// Constants: the `#define` values of sqlite3.h, imported as `Int32` like every integer macro.

// MARK: - Types

/// https://sqlite.org/c3ref/int64.html
public typealias sqlite_int64 = Int64
/// https://sqlite.org/c3ref/int64.html
public typealias sqlite_uint64 = UInt64
/// https://sqlite.org/c3ref/int64.html
public typealias sqlite3_int64 = sqlite_int64
/// https://sqlite.org/c3ref/int64.html
public typealias sqlite3_uint64 = sqlite_uint64
/// https://sqlite.org/c3ref/c_static.html (`typedef void (*sqlite3_destructor_type)(void*)`)
public typealias sqlite3_destructor_type = @convention(c) (UnsafeMutableRawPointer?) -> Void

// MARK: - Constants

/// https://sqlite.org/rescode.html#ok
public var SQLITE_OK: Int32 { 0 }
/// https://sqlite.org/rescode.html#error
public var SQLITE_ERROR: Int32 { 1 }
/// https://sqlite.org/rescode.html#perm
public var SQLITE_PERM: Int32 { 3 }
/// https://sqlite.org/rescode.html#busy
public var SQLITE_BUSY: Int32 { 5 }
/// https://sqlite.org/rescode.html#locked
public var SQLITE_LOCKED: Int32 { 6 }
/// https://sqlite.org/rescode.html#nomem
public var SQLITE_NOMEM: Int32 { 7 }
/// https://sqlite.org/rescode.html#readonly
public var SQLITE_READONLY: Int32 { 8 }
/// https://sqlite.org/rescode.html#ioerr
public var SQLITE_IOERR: Int32 { 10 }
/// https://sqlite.org/rescode.html#corrupt
public var SQLITE_CORRUPT: Int32 { 11 }
/// https://sqlite.org/rescode.html#full
public var SQLITE_FULL: Int32 { 13 }
/// https://sqlite.org/rescode.html#cantopen
public var SQLITE_CANTOPEN: Int32 { 14 }
/// https://sqlite.org/rescode.html#toobig
public var SQLITE_TOOBIG: Int32 { 18 }
/// https://sqlite.org/rescode.html#constraint
public var SQLITE_CONSTRAINT: Int32 { 19 }
/// https://sqlite.org/rescode.html#misuse
public var SQLITE_MISUSE: Int32 { 21 }
/// https://sqlite.org/rescode.html#auth
public var SQLITE_AUTH: Int32 { 23 }
/// https://sqlite.org/rescode.html#range
public var SQLITE_RANGE: Int32 { 25 }
/// https://sqlite.org/rescode.html#notadb
public var SQLITE_NOTADB: Int32 { 26 }
/// https://sqlite.org/rescode.html#row
public var SQLITE_ROW: Int32 { 100 }
/// https://sqlite.org/rescode.html#done
public var SQLITE_DONE: Int32 { 101 }
/// https://sqlite.org/c3ref/c_open_autoproxy.html
public var SQLITE_OPEN_READONLY: Int32 { 1 }
/// https://sqlite.org/c3ref/c_open_autoproxy.html
public var SQLITE_OPEN_READWRITE: Int32 { 2 }
/// https://sqlite.org/c3ref/c_open_autoproxy.html
public var SQLITE_OPEN_CREATE: Int32 { 4 }
/// https://sqlite.org/c3ref/c_open_autoproxy.html
public var SQLITE_OPEN_NOMUTEX: Int32 { 0x8000 }
/// https://sqlite.org/c3ref/c_open_autoproxy.html
public var SQLITE_OPEN_NOFOLLOW: Int32 { 0x1000000 }
/// https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html#sqlitefcntlpersistwal
public var SQLITE_FCNTL_PERSIST_WAL: Int32 { 10 }
/// https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html#sqlitefcntldataversion
public var SQLITE_FCNTL_DATA_VERSION: Int32 { 35 }
/// https://sqlite.org/c3ref/c_prepare_normalize.html
public var SQLITE_PREPARE_PERSISTENT: Int32 { 1 }
/// https://sqlite.org/c3ref/c_blob.html
public var SQLITE_INTEGER: Int32 { 1 }
/// https://sqlite.org/c3ref/c_blob.html
public var SQLITE_FLOAT: Int32 { 2 }
/// https://sqlite.org/c3ref/c_blob.html
public var SQLITE_TEXT: Int32 { 3 }
/// https://sqlite.org/c3ref/c_blob.html
public var SQLITE_BLOB: Int32 { 4 }
/// https://sqlite.org/c3ref/c_blob.html
public var SQLITE_NULL: Int32 { 5 }
/// https://sqlite.org/c3ref/c_any.html
public var SQLITE_UTF8: Int32 { 1 }
/// https://sqlite.org/c3ref/c_checkpoint_full.html
public var SQLITE_CHECKPOINT_PASSIVE: Int32 { 0 }
/// https://sqlite.org/c3ref/c_checkpoint_full.html
public var SQLITE_CHECKPOINT_RESTART: Int32 { 2 }
/// https://sqlite.org/c3ref/c_checkpoint_full.html
public var SQLITE_CHECKPOINT_TRUNCATE: Int32 { 3 }

// MARK: - Functions

/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_blob64(_: OpaquePointer!, _: Int32, _: UnsafeRawPointer!, _: sqlite3_uint64, _: (@convention(c) (UnsafeMutableRawPointer?) -> Void)!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_double(_: OpaquePointer!, _: Int32, _: Double) -> Int32 { 0 }
/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_int64(_: OpaquePointer!, _: Int32, _: sqlite3_int64) -> Int32 { 0 }
/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_null(_: OpaquePointer!, _: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_text64(_: OpaquePointer!, _: Int32, _: UnsafePointer<CChar>!, _: sqlite3_uint64, _: (@convention(c) (UnsafeMutableRawPointer?) -> Void)!, _ encoding: UInt8) -> Int32 { 0 }
/// https://sqlite.org/c3ref/bind_blob.html
public func sqlite3_bind_zeroblob(_: OpaquePointer!, _: Int32, _ n: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/busy_handler.html
public func sqlite3_busy_handler(_: OpaquePointer!, _: (@convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32)!, _: UnsafeMutableRawPointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/changes.html
public func sqlite3_changes(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/clear_bindings.html
public func sqlite3_clear_bindings(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/close.html
public func sqlite3_close_v2(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_blob(_: OpaquePointer!, _ iCol: Int32) -> UnsafeRawPointer! { nil }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_bytes(_: OpaquePointer!, _ iCol: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_double(_: OpaquePointer!, _ iCol: Int32) -> Double { 0 }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_int64(_: OpaquePointer!, _ iCol: Int32) -> sqlite3_int64 { 0 }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_text(_: OpaquePointer!, _ iCol: Int32) -> UnsafePointer<UInt8>! { nil }
/// https://sqlite.org/c3ref/column_blob.html
public func sqlite3_column_type(_: OpaquePointer!, _ iCol: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/errcode.html
public func sqlite3_errmsg(_: OpaquePointer!) -> UnsafePointer<CChar>! { nil }
/// https://sqlite.org/c3ref/errcode.html
public func sqlite3_errstr(_: Int32) -> UnsafePointer<CChar>! { nil }
/// https://sqlite.org/c3ref/exec.html
public func sqlite3_exec(_: OpaquePointer!, _ sql: UnsafePointer<CChar>!, _ callback: (@convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32)!, _: UnsafeMutableRawPointer!, _ errmsg: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/errcode.html
public func sqlite3_extended_errcode(_ db: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/extended_result_codes.html
public func sqlite3_extended_result_codes(_: OpaquePointer!, _ onoff: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/file_control.html
public func sqlite3_file_control(_: OpaquePointer!, _ zDbName: UnsafePointer<CChar>!, _ op: Int32, _: UnsafeMutableRawPointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/finalize.html
public func sqlite3_finalize(_ pStmt: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/get_autocommit.html
public func sqlite3_get_autocommit(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/last_insert_rowid.html
public func sqlite3_last_insert_rowid(_: OpaquePointer!) -> sqlite3_int64 { 0 }
/// https://sqlite.org/c3ref/open.html
public func sqlite3_open_v2(_ filename: UnsafePointer<CChar>!, _ ppDb: UnsafeMutablePointer<OpaquePointer?>!, _ flags: Int32, _ zVfs: UnsafePointer<CChar>!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/prepare.html
public func sqlite3_prepare_v3(_ db: OpaquePointer!, _ zSql: UnsafePointer<CChar>!, _ nByte: Int32, _ prepFlags: UInt32, _ ppStmt: UnsafeMutablePointer<OpaquePointer?>!, _ pzTail: UnsafeMutablePointer<UnsafePointer<CChar>?>!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/reset.html
public func sqlite3_reset(_ pStmt: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/sleep.html
public func sqlite3_sleep(_: Int32) -> Int32 { 0 }
/// https://sqlite.org/c3ref/step.html
public func sqlite3_step(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/system_errno.html
public func sqlite3_system_errno(_: OpaquePointer!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/wal_checkpoint.html
public func sqlite3_wal_checkpoint(_ db: OpaquePointer!, _ zDb: UnsafePointer<CChar>!) -> Int32 { 0 }
/// https://sqlite.org/c3ref/wal_hook.html
public func sqlite3_wal_hook(_: OpaquePointer!, _: (@convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32)!, _: UnsafeMutableRawPointer!) -> UnsafeMutableRawPointer! { nil }
/// https://sqlite.org/c3ref/wal_checkpoint_v2.html
public func sqlite3_wal_checkpoint_v2(_ db: OpaquePointer!, _ zDb: UnsafePointer<CChar>!, _ eMode: Int32, _ pnLog: UnsafeMutablePointer<Int32>!, _ pnCkpt: UnsafeMutablePointer<Int32>!) -> Int32 { 0 }
