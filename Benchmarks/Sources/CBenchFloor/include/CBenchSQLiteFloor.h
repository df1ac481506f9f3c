#ifndef STRATA_BENCH_SQLITE_FLOOR_H
#define STRATA_BENCH_SQLITE_FLOOR_H

#include <stddef.h>

#include "CBenchFloor.h"

/// The floor of any cache that seals each entry into a row of one SQLite database and reads it the way
/// DiskCache's SQLite engine must (Linux only): WAL, `synchronous=NORMAL`, a 32 MiB page cache, no memory map
/// (a database truncated by another process would be `SIGBUS`), one autocommit statement per operation (so
/// every get takes the WAL read lock, and sees every other process's last commit), a row named by
/// HMAC-SHA-256 of the key, the value sealed with AES-256-GCM (``strata_floor_seal``).
///
/// Nothing else: no expiry, epoch, tags, statistics, recency or accounting; one table whose row id is the
/// name's first 64 bits (one b-tree search per get, no index; python-diskcache searches an index, then the
/// table); statements prepared once.
/// When this alone is below a target's speed-up over another store, no sealed-row design under those rules
/// meets the target by better code. Not thread-safe: one floor per thread.
typedef struct strata_sqlite_floor strata_sqlite_floor;

/// Opens (creating) the database at `path` with the pragmas above; NULL on failure. `cipher` is borrowed and
/// must outlive the floor.
strata_sqlite_floor *strata_sqlite_floor_open(const char *path, strata_floor_cipher *cipher);

/// Closes the database (NULL is allowed).
void strata_sqlite_floor_close(strata_sqlite_floor *floor);

/// Seals `length` bytes under a fresh nonce and stores them in the key's row (`INSERT OR REPLACE`). Returns 1 or 0.
int strata_sqlite_floor_set(strata_sqlite_floor *floor, const void *key, size_t key_length, const void *value,
                            size_t length);

/// Reads the key's row and opens it into `plaintext` (`capacity` bytes). Returns the plaintext's length, -1
/// when there is no row, -2 on an error (SQLite, a forged or damaged value, or a value over `capacity`).
long strata_sqlite_floor_get(strata_sqlite_floor *floor, const void *key, size_t key_length, void *plaintext,
                             size_t capacity);

#endif
