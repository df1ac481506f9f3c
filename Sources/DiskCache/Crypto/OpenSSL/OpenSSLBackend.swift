#if !canImport(CryptoKit)
// PLACEHOLDER — the libcrypto EVP back end (issue 3).
import COpenSSL
import Foundation

enum OpenSSLBackend {}
#endif  // !canImport(CryptoKit): Apple platforms use CryptoKit
