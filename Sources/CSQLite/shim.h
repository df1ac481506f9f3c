#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H

// The system SQLite (Debian's libsqlite3-dev, 3.40.1 on Debian 12) for DiskCache's SQLite engine on Linux.
// Apple platforms use the SDK's SQLite3 module instead (Docs/DiskEngine-SQLite.md).
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: this fixes its arguments for the one option the
// engine sets. Leaves the WAL to the engine when the last connection closes instead of checkpointing it
// there (Docs/DiskEngine-SQLite.md, "Checkpoints"); returns SQLite's result code.
static inline int strata_sqlite3_no_checkpoint_on_close(sqlite3 *database) {
    return sqlite3_db_config(database, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

#endif
