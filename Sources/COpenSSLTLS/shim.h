#ifndef STRATA_COPENSSLTLS_SHIM_H
#define STRATA_COPENSSLTLS_SHIM_H

// The parts of libssl that the Redis connection layer's TLS transport calls (Linux), and one function per C
// macro Swift cannot import: each calls the macro it is named after, nothing more.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>

static inline int strata_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}

static inline long strata_SSL_CTX_set_mode(SSL_CTX *context, long mode) {
    return SSL_CTX_set_mode(context, mode);
}

static inline int strata_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline void strata_BIO_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

static inline void strata_BIO_set_retry_write(BIO *bio) {
    BIO_set_retry_write(bio);
}

static inline void strata_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}

#endif
