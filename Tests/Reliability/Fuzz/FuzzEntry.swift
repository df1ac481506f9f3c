import DiskCache
import Foundation

// The decoder fuzzer of Docs/Reliability.md. Built with `-D STRATA_FUZZ --sanitize=fuzzer` (see
// Tests/Reliability/run-fuzz.sh), this file exports libFuzzer's entry point and libFuzzer supplies `main`.
// In a plain `swift build` it is an ordinary executable that replays corpus files through the same
// function, so CI's build stays green and a crashing input found by the fuzzer can be replayed under a
// debugger.

/// Feeds one input to a decoder: the first byte picks the decoder, the rest is the file's bytes.
///
/// Whatever the bytes, both decoders must return or throw a typed error: a crash, a trap or a sanitizer
/// report is a bug.
func fuzzOneInput(_ input: Data) {
    guard let selector = input.first else { return }
    let bytes = input.dropFirst()
    if selector & 1 == 0 {
        DiskCacheFuzzing.decodeEntry(Data(bytes))
    } else {
        DiskCacheFuzzing.decodeKeyCheck(Data(bytes))
    }
}

#if STRATA_FUZZ
/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzOneInput(start.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
#else
/// Replays corpus files (or every file in corpus folders) given as arguments.
@main
enum CorpusReplay {
    static func main() {
        var replayed = 0
        for path in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                fuzzOneInput(data)
                replayed += 1
            }
        }
        print("replayed \(replayed) inputs without a crash")
    }
}
#endif
