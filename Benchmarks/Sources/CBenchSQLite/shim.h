#ifndef STRATA_BENCH_SQLITE_SHIM_H
#define STRATA_BENCH_SQLITE_SHIM_H

// The system SQLite, for the sealed-row floor (CBenchFloor/SQLiteFloor.c) only.
#include <sqlite3.h>

#endif
