#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

extension SQLiteConnection {
    /// Closes a connection whose database file was deleted or replaced at its path since it opened.
    ///
    /// SQLite's last close of a database checkpoints it and then deletes its `-wal` and `-shm` **by name**;
    /// those names now belong to the database at the path (another instance's or process's), whose WAL would
    /// be deleted under it. Persistent WAL mode keeps SQLite from deleting either; the old files' space is
    /// freed when their last descriptor closes, here.
    func closeDetached() {
        if let database = try? openDatabase() {
            var on: Int32 = 1
            _ = sqlite3_file_control(database, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
        }
        close()
    }
}
