#include "CBenchSQLiteFloor.h"

// Built on Linux only (Package.swift links libsqlite3 there); an empty file elsewhere.
#if defined(__linux__)
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// The row id: the keyed name's first 64 bits. A store would have to resolve the collisions this ignores (one
// in about 10^11 pairs of keys); the floor only needs the least work, one search of the table's b-tree.
static sqlite3_int64 row_id(const unsigned char *name) {
    sqlite3_uint64 id = 0;
    for (int index = 0; index < 8; index++) id = id << 8 | name[index];
    return (sqlite3_int64)id;
}

struct strata_sqlite_floor {
    sqlite3 *database;
    sqlite3_stmt *insert;
    sqlite3_stmt *select;
    strata_floor_cipher *cipher;
    unsigned char *sealed;  // reused by sets, grown as needed
    size_t capacity;
};

// The engine's pragmas for `.none` durability (SQLiteConnection+Options.swift), minus what only guards
// against hostile files (trusted_schema) or bounds the WAL (journal_size_limit): neither costs a get anything.
static const char *const setup =
    "PRAGMA cache_size=-32768;"
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA mmap_size=0;"
    "PRAGMA busy_timeout=5000;"
    "CREATE TABLE IF NOT EXISTS entry(value BLOB NOT NULL);";

strata_sqlite_floor *strata_sqlite_floor_open(const char *path, strata_floor_cipher *cipher) {
    strata_sqlite_floor *floor = calloc(1, sizeof *floor);
    if (floor == NULL) return NULL;
    floor->cipher = cipher;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    int ready = sqlite3_open_v2(path, &floor->database, flags, NULL) == SQLITE_OK
        && sqlite3_exec(floor->database, setup, NULL, NULL, NULL) == SQLITE_OK
        && sqlite3_prepare_v3(floor->database, "INSERT OR REPLACE INTO entry(rowid, value) VALUES (?1, ?2)", -1,
                              SQLITE_PREPARE_PERSISTENT, &floor->insert, NULL) == SQLITE_OK
        && sqlite3_prepare_v3(floor->database, "SELECT value FROM entry WHERE rowid = ?1", -1,
                              SQLITE_PREPARE_PERSISTENT, &floor->select, NULL) == SQLITE_OK;
    if (!ready) {
        strata_sqlite_floor_close(floor);
        return NULL;
    }
    return floor;
}

void strata_sqlite_floor_close(strata_sqlite_floor *floor) {
    if (floor == NULL) return;
    sqlite3_finalize(floor->insert);
    sqlite3_finalize(floor->select);
    sqlite3_close_v2(floor->database);
    free(floor->sealed);
    free(floor);
}

int strata_sqlite_floor_set(strata_sqlite_floor *floor, const void *key, size_t key_length, const void *value,
                            size_t length) {
    unsigned char name[STRATA_FLOOR_MAC_BYTES];
    size_t sealed_length = length + STRATA_FLOOR_OVERHEAD;
    if (sealed_length < length || sealed_length > (size_t)INT_MAX) return 0;
    if (sealed_length > floor->capacity) {
        unsigned char *grown = realloc(floor->sealed, sealed_length);
        if (grown == NULL) return 0;
        floor->sealed = grown;
        floor->capacity = sealed_length;
    }
    if (!strata_floor_mac(floor->cipher, key, key_length, name)) return 0;
    if (!strata_floor_seal(floor->cipher, value, length, floor->sealed)) return 0;
    sqlite3_stmt *insert = floor->insert;
    int stored = sqlite3_bind_int64(insert, 1, row_id(name)) == SQLITE_OK
        && sqlite3_bind_blob(insert, 2, floor->sealed, (int)sealed_length, SQLITE_STATIC) == SQLITE_OK
        && sqlite3_step(insert) == SQLITE_DONE;
    sqlite3_reset(insert);
    sqlite3_clear_bindings(insert);
    return stored;
}

long strata_sqlite_floor_get(strata_sqlite_floor *floor, const void *key, size_t key_length, void *plaintext,
                             size_t capacity) {
    unsigned char name[STRATA_FLOOR_MAC_BYTES];
    if (!strata_floor_mac(floor->cipher, key, key_length, name)) return -2;
    sqlite3_stmt *select = floor->select;
    long result = -2;
    if (sqlite3_bind_int64(select, 1, row_id(name)) == SQLITE_OK) {
        int step = sqlite3_step(select);
        if (step == SQLITE_DONE) {
            result = -1;
        } else if (step == SQLITE_ROW) {
            // The column's bytes stay valid until the reset below; opening writes only to `plaintext`.
            void *sealed = (void *)sqlite3_column_blob(select, 0);
            size_t sealed_length = (size_t)sqlite3_column_bytes(select, 0);
            if (sealed != NULL && sealed_length >= STRATA_FLOOR_OVERHEAD
                && sealed_length - STRATA_FLOOR_OVERHEAD <= capacity
                && strata_floor_open(floor->cipher, sealed, sealed_length, plaintext)) {
                result = (long)(sealed_length - STRATA_FLOOR_OVERHEAD);
            }
        }
    }
    sqlite3_reset(select);
    sqlite3_clear_bindings(select);
    return result;
}
#endif
