import Foundation

/// A self-signed certificate for 127.0.0.1 and `localhost` with its key, made by the `openssl` command into a
/// temporary folder removed with this value: the TLS rows' server presents it and their clients trust it as
/// their CA file. EC P-256, valid for two days.
///
/// Thread safety: immutable after `init`; the files are only read.
final class BenchCertificates: Sendable {
    private let folder: URL
    /// The certificate (PEM), also the CA file of every client.
    var certificate: String { folder.appendingPathComponent("server.crt").path }
    /// Its private key (PEM).
    var key: String { folder.appendingPathComponent("server.key").path }

    /// Makes the certificate; throws ``RedisBenchServer/Unavailable`` when `openssl` is missing or fails.
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder.appendingPathComponent("server.key").path, "-out",
            folder.appendingPathComponent("server.crt").path, "-days", "2", "-subj", "/CN=localhost", "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RedisBenchServer.Unavailable(description: "openssl could not make the TLS rows' certificate")
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }
}
