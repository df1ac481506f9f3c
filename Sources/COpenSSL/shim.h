#ifndef STRATA_COPENSSL_SHIM_H
#define STRATA_COPENSSL_SHIM_H

// The parts of libcrypto that DiskCache's Linux back end calls: EVP AEAD, HMAC, KDF and random bytes.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#endif
