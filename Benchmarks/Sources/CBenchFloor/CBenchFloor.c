#include "CBenchFloor.h"

// Built on Linux only (Package.swift links it there); an empty file elsewhere.
#if defined(__linux__)
#include <limits.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

enum { key_bytes = 32, tag_bytes = 16, nonce_bytes = 12, mac_bytes = 32 };

struct strata_floor_cipher {
    EVP_CIPHER_CTX *seal;
    EVP_CIPHER_CTX *open;
    EVP_MAC *mac;
    EVP_MAC_CTX *name;
};

strata_floor_cipher *strata_floor_cipher_create(const unsigned char *encryption_key, const unsigned char *naming_key) {
    strata_floor_cipher *cipher = calloc(1, sizeof *cipher);
    if (cipher == NULL) return NULL;
    cipher->seal = EVP_CIPHER_CTX_new();
    cipher->open = EVP_CIPHER_CTX_new();
    cipher->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    cipher->name = cipher->mac != NULL ? EVP_MAC_CTX_new(cipher->mac) : NULL;
    char digest[] = "SHA256";
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    // Keys are set once here; each operation below passes only a nonce (or nothing, for the MAC), which
    // keeps the AES key schedule, the GHASH table and the HMAC pads of this setup.
    int ready = cipher->seal != NULL && cipher->open != NULL && cipher->name != NULL
        && EVP_EncryptInit_ex(cipher->seal, EVP_aes_256_gcm(), NULL, encryption_key, NULL) == 1
        && EVP_DecryptInit_ex(cipher->open, EVP_aes_256_gcm(), NULL, encryption_key, NULL) == 1
        && EVP_MAC_init(cipher->name, naming_key, key_bytes, parameters) == 1;
    if (!ready) {
        strata_floor_cipher_free(cipher);
        return NULL;
    }
    return cipher;
}

void strata_floor_cipher_free(strata_floor_cipher *cipher) {
    if (cipher == NULL) return;
    EVP_CIPHER_CTX_free(cipher->seal);
    EVP_CIPHER_CTX_free(cipher->open);
    EVP_MAC_CTX_free(cipher->name);
    EVP_MAC_free(cipher->mac);
    free(cipher);
}

int strata_floor_mac(strata_floor_cipher *cipher, const void *key, size_t key_length, unsigned char *mac) {
    size_t length = 0;
    // A NULL key restarts HMAC under the key already set (OpenSSL 3 HMAC provider).
    return EVP_MAC_init(cipher->name, NULL, 0, NULL) == 1 && EVP_MAC_update(cipher->name, key, key_length) == 1
        && EVP_MAC_final(cipher->name, mac, &length, mac_bytes) == 1 && length == mac_bytes;
}

int strata_floor_file_name(strata_floor_cipher *cipher, const void *key, size_t key_length, unsigned char *name) {
    static const char digits[] = "0123456789abcdef";
    unsigned char mac[mac_bytes];
    if (!strata_floor_mac(cipher, key, key_length, mac)) return 0;
    for (size_t index = 0; index < mac_bytes; index++) {
        name[2 * index] = digits[mac[index] >> 4];
        name[2 * index + 1] = digits[mac[index] & 15];
    }
    return 1;
}

int strata_floor_seal(strata_floor_cipher *cipher, const void *plaintext, size_t length, void *sealed) {
    unsigned char *output = sealed;
    unsigned char *nonce = output + length + tag_bytes;
    int written = 0, final = 0;
    if (length > INT_MAX - STRATA_FLOOR_OVERHEAD) return 0;
    if (RAND_bytes(nonce, nonce_bytes) != 1) return 0;
    if (EVP_EncryptInit_ex(cipher->seal, NULL, NULL, NULL, nonce) != 1) return 0;
    if (length > 0 && EVP_EncryptUpdate(cipher->seal, output, &written, plaintext, (int)length) != 1) return 0;
    if (EVP_EncryptFinal_ex(cipher->seal, output + written, &final) != 1) return 0;
    if ((size_t)written + (size_t)final != length) return 0;
    return EVP_CIPHER_CTX_ctrl(cipher->seal, EVP_CTRL_GCM_GET_TAG, tag_bytes, output + length) == 1;
}

int strata_floor_open(strata_floor_cipher *cipher, void *sealed, size_t sealed_length, void *plaintext) {
    if (sealed_length < STRATA_FLOOR_OVERHEAD || sealed_length > INT_MAX) return 0;
    size_t length = sealed_length - STRATA_FLOOR_OVERHEAD;
    const unsigned char *input = sealed;
    unsigned char *output = plaintext;
    unsigned char tag[tag_bytes], nonce[nonce_bytes];
    memcpy(tag, input + length, tag_bytes);
    memcpy(nonce, input + length + tag_bytes, nonce_bytes);
    int written = 0, final = 0;
    int authentic = EVP_DecryptInit_ex(cipher->open, NULL, NULL, NULL, nonce) == 1
        && (length == 0 || EVP_DecryptUpdate(cipher->open, output, &written, input, (int)length) == 1)
        && EVP_CIPHER_CTX_ctrl(cipher->open, EVP_CTRL_GCM_SET_TAG, tag_bytes, tag) == 1
        && EVP_DecryptFinal_ex(cipher->open, output + written, &final) == 1
        && (size_t)written + (size_t)final == length;
    if (!authentic) memset(output, 0, length);
    return authentic;
}
#endif
