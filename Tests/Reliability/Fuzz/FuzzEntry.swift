import DiskCache
import Foundation

// The decoder fuzzer of Docs/Reliability.md. Built with `-D STRATA_FUZZ --sanitize=fuzzer` (see
// Tests/Reliability/run-fuzz.sh), this file exports libFuzzer's entry point and libFuzzer supplies `main`.
// In a plain `swift build` it is an ordinary executable that replays corpus files through the same
// function (or writes a fresh seed corpus), so CI's build stays green and an input the fuzzer flagged can
// be replayed under a debugger.

/// Feeds one input to a decoder. The low two bits of the first byte pick how the rest is used:
/// 0 an entry file (a first byte of exactly 4: a statistics file, `store.stats`, whose counters are then
/// merged as a flush merges them); 1 a key-check record; 2 a header (52 bytes) and plaintext that are
/// sealed under the fuzz fixture first, so made-up headers get past authentication; 3 an entry file handed
/// over as a slice whose `startIndex` is not zero.
///
/// With `STRATA_FUZZ_TARGET=resp` in the environment every input goes to the RESP3 reply decoder of the
/// Redis tier instead (`fuzzRESP`), so that target keeps a corpus of its own; with `STRATA_FUZZ_TARGET=sqlite`
/// every input is a SQLite store to open and read (`fuzzSQLite`, corpus in Tests/Reliability/Corpus-SQLite).
///
/// Whatever the bytes, the decoders must return: a crash, a trap or a sanitizer report is a bug.
///
/// - Returns: Whether the decoder accepted the input (seeds should be accepted; mutations rarely are).
@discardableResult
func fuzzOneInput(_ input: Data) -> Bool {
    if fuzzesRESP { return fuzzRESP(Array(input)) }
    if fuzzesSQLite { return fuzzSQLite(input) }
    guard let selector = input.first else { return false }
    let body = Data(input.dropFirst())
    switch selector & 3 {
    case 0 where selector == 4:
        return DiskCacheFuzzing.decodeStatistics(body)
    case 0:
        return DiskCacheFuzzing.decodeEntry(body)
    case 1:
        return DiskCacheFuzzing.decodeKeyCheck(body)
    case 2:
        return DiskCacheFuzzing.decodeEntry(
            DiskCacheFuzzing.sealEntry(header: body.prefix(52), plaintext: Data(body.dropFirst(52))))
    default:
        let padding = Int(selector >> 2) + 1
        return DiskCacheFuzzing.decodeEntry((Data(count: padding) + body).dropFirst(padding))
    }
}

/// Whether `STRATA_FUZZ_TARGET=resp` picked the RESP3 decoder.
let fuzzesRESP = ProcessInfo.processInfo.environment["STRATA_FUZZ_TARGET"] == "resp"

/// Whether `STRATA_FUZZ_TARGET=sqlite` picked the damaged-database target.
let fuzzesSQLite = ProcessInfo.processInfo.environment["STRATA_FUZZ_TARGET"] == "sqlite"

#if STRATA_FUZZ
/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzOneInput(start.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
#else
/// `StrataFuzz FILE|DIR...` replays inputs; `StrataFuzz --make-corpus DIR` writes the seed corpus;
/// `StrataFuzz --mutate ROUNDS SEED DIR` feeds ROUNDS seeded byte mutations of DIR's seeds (a short fuzz
/// without libFuzzer, for CI).
@main
enum CorpusReplay {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--make-corpus", arguments.count == 2 {
            let directory = URL(fileURLWithPath: arguments[1])
            try fuzzesRESP
                ? SeedCorpus.writeRESP(to: directory)
                : fuzzesSQLite ? SeedCorpus.writeSQLite(to: directory) : SeedCorpus.write(to: directory)
            return
        }
        if arguments.first == "--mutate", arguments.count == 4, let rounds = Int(arguments[1]),
            let seed = UInt64(arguments[2])
        {
            MutationReplay.run(corpus: arguments[3], rounds: rounds, seed: seed)
            return
        }
        var replayed = 0
        var accepted = 0
        for path in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                if fuzzOneInput(data) { accepted += 1 }
                replayed += 1
            }
        }
        print("replayed \(replayed) inputs without a crash; \(accepted) decoded as valid records")
    }
}
#endif
