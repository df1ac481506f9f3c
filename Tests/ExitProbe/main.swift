// The child process of the exit tests (Tests/CacheCryptoTests/OpenSSLExitTests.swift): threads that call
// into OpenSSL in a loop while the main thread ends the process, which is when OpenSSL's own exit handler
// (if one was registered) frees the library's state under the threads' feet.
//
//   strata-exit-probe crypto THREADS   seal, open, HMAC, HKDF and random bytes through CacheCrypto
//   strata-exit-probe tls THREADS      the same, plus a TLS context made and freed (RedisConnection's libssl)
//   strata-exit-probe control THREADS  `crypto` after initializing OpenSSL with its exit handler first (what the
//                                      library did before): shows the crash the tests guard against, by hand
//
// It exits with status 0 once every thread has finished at least one round (an event, not a delay), while
// they are still running; 2 on a usage error, 3 when a round throws. A crash at exit shows as a signal.
import CacheCrypto
import Foundation
import RedisConnection

#if canImport(COpenSSL)
import COpenSSL
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, ["crypto", "tls", "control"].contains(arguments[1]), let threads = Int(arguments[2]),
    threads > 0
else {
    FileHandle.standardError.write(Data("usage: strata-exit-probe crypto|tls|control THREADS\n".utf8))
    exit(2)
}
let usesTLS = arguments[1] == "tls"
#if canImport(COpenSSL)
// The first initialization decides whether OpenSSL registers its exit handler; this one lets it, as any
// libcrypto call that initializes the library on its own does. (With no option bit set the call returns at
// once and initializes nothing.)
if arguments[1] == "control" { _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_LOAD_CRYPTO_STRINGS), nil) }
#endif

/// One round of every libcrypto entry point CacheCrypto has (and a TLS context in `tls` mode), the calls that
/// fetch algorithms from the library's global store (which its exit handler frees) repeated so that a thread
/// spends most of its time inside OpenSSL.
@Sendable func round(_ subkey: any PreparedAESGCMSubkey) throws {
    for _ in 0..<20 {
        _ = try CryptoBackend.hkdfSHA256(
            inputKey: Data(repeating: 1, count: 32), salt: Data(), info: Data(), outputByteCount: 32)
        _ = try CryptoBackend.randomBytes(count: 12)
    }
    let nonce = try CryptoBackend.randomBytes(count: 12)
    let plaintext = Data(repeating: 0x61, count: 256)
    var ciphertext = Data(count: plaintext.count)
    var tag = Data(count: 16)
    try nonce.withUnsafeBytes { nonce in
        try plaintext.withUnsafeBytes { plain in
            try ciphertext.withUnsafeMutableBytes { sealed in
                try tag.withUnsafeMutableBytes { tag in
                    try subkey.seal(
                        nonce: nonce, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), first: plain,
                        second: UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: sealed, tag: tag)
                }
            }
        }
    }
    let key = Data(repeating: 7, count: 32)
    _ = try CryptoBackend.sealAESGCM(key: key, nonce: nonce, plaintext: plaintext, associatedData: Data())
    _ = try CryptoBackend.hmacSHA256(key: key, data: ciphertext)
    _ = try CryptoBackend.hkdfSHA256(inputKey: key, salt: tag, info: Data("probe".utf8), outputByteCount: 32)
    if usesTLS { _ = try TLSContext(TLSOptions()) }
}

let started = DispatchSemaphore(value: 0)
for _ in 0..<threads {
    Thread.detachNewThread {
        do {
            let subkey = try CryptoBackend.prepareAESGCM(key: Data(repeating: 9, count: 32))
            try round(subkey)
            started.signal()
            while true { try round(subkey) }
        } catch {
            FileHandle.standardError.write(Data("strata-exit-probe: \(error)\n".utf8))
            exit(3)
        }
    }
}
for _ in 0..<threads { started.wait() }
exit(0)
