#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H

// The system SQLite (Debian's libsqlite3-dev, 3.40.1 on Debian 12) for DiskCache's SQLite engine on Linux.
// Apple platforms use the SDK's SQLite3 module instead (Docs/DiskEngine-SQLite.md).
#include <sqlite3.h>

#endif
