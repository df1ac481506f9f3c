#ifndef STRATA_BENCH_FLOOR_H
#define STRATA_BENCH_FLOOR_H

#include <stddef.h>

/// The cryptography that any cache keeping one AES-256-GCM-encrypted file per entry, named by a keyed
/// hash of its key, cannot avoid — and nothing else — through libcrypto's EVP interface (Linux only).
///
/// The benchmark adds it to plain file I/O to measure a "floor": what no such cache can beat on this
/// machine, however well written. A sealed value is laid out as ciphertext ‖ 16-byte tag ‖ 96-bit nonce,
/// so that opening can decrypt in place and leave the plaintext at the start of the buffer.
///
/// One context serves one thread at a time (like a DiskCache's pooled contexts): the key schedule, the
/// GHASH tables and the HMAC key are set up once, and each operation only sets a nonce or restarts the MAC.
typedef struct strata_floor_cipher strata_floor_cipher;

/// Bytes a sealed value adds to its plaintext: the 16-byte GCM tag and the 12-byte nonce.
#define STRATA_FLOOR_OVERHEAD 28

/// A context keyed with a 32-byte AES-256-GCM key and a 32-byte HMAC-SHA-256 key; NULL on failure.
strata_floor_cipher *strata_floor_cipher_create(const unsigned char *encryption_key, const unsigned char *naming_key);

/// Frees a context (NULL is allowed).
void strata_floor_cipher_free(strata_floor_cipher *cipher);

/// Bytes of an HMAC-SHA-256 name.
#define STRATA_FLOOR_MAC_BYTES 32

/// Writes HMAC-SHA-256(naming key, key), `STRATA_FLOOR_MAC_BYTES` bytes, into `mac`. Returns 1 or 0.
int strata_floor_mac(strata_floor_cipher *cipher, const void *key, size_t key_length, unsigned char *mac);

/// Writes HMAC-SHA-256(naming key, key) as 64 lowercase hex digits (no NUL) into `name`. Returns 1 or 0.
int strata_floor_file_name(strata_floor_cipher *cipher, const void *key, size_t key_length, unsigned char *name);

/// Encrypts `length` bytes under a fresh random nonce (RAND_bytes) into `sealed`, which holds
/// `length + STRATA_FLOOR_OVERHEAD` bytes. Returns 1 or 0.
int strata_floor_seal(strata_floor_cipher *cipher, const void *plaintext, size_t length, void *sealed);

/// Verifies and decrypts `sealed_length` bytes into `plaintext` (`sealed_length - STRATA_FLOOR_OVERHEAD`
/// bytes; may be `sealed` itself). Returns 1 when authentic, else 0 with the output zeroed.
int strata_floor_open(strata_floor_cipher *cipher, void *sealed, size_t sealed_length, void *plaintext);

#endif
