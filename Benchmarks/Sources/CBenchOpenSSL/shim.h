#ifndef STRATA_BENCH_OPENSSL_SHIM_H
#define STRATA_BENCH_OPENSSL_SHIM_H

// The libcrypto headers the benchmark's floor measurement (CBenchFloor) uses: EVP AEAD, EVP MAC, RAND.
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>

#endif
