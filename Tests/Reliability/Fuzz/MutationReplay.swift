import Foundation

/// A short fuzz without libFuzzer, for CI: seeded random damage to the seeds of a corpus (bytes flipped,
/// overwritten with boundary values, runs zeroed, the input cut or grown), each fed to ``fuzzOneInput(_:)``.
/// A crash or trap ends the process, so a clean exit means every input was survived.
enum MutationReplay {
    static func run(corpus: String, rounds: Int, seed: UInt64) {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []).sorted()
        let seeds = files.compactMap { FileManager.default.contents(atPath: corpus + "/" + $0) }.filter { !$0.isEmpty }
        guard !seeds.isEmpty else {
            print("no seeds in \(corpus)")
            exit(1)
        }
        var state = seed
        // SplitMix64, inline: the fuzz target links no test-support module.
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var accepted = 0
        let started = Date()
        for round in 0..<rounds {
            var bytes = [UInt8](seeds[round % seeds.count])
            for _ in 0...(next() % 4) {
                let offset = Int(next() % UInt64(bytes.count))
                switch next() % 5 {
                case 0: bytes[offset] ^= UInt8(truncatingIfNeeded: next() | 1)
                case 1: bytes[offset] = [0, 0x7F, 0x80, 0xFF][Int(next() % 4)]
                case 2: for index in offset..<min(bytes.count, offset + Int(next() % 64)) { bytes[index] = 0 }
                case 3: bytes.removeLast(min(bytes.count - 1, Int(next() % 4096)))
                default: bytes += (0..<Int(next() % 512)).map { _ in UInt8(truncatingIfNeeded: next()) }
                }
            }
            if fuzzOneInput(Data(bytes)) { accepted += 1 }
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "mutated \(rounds) inputs from \(seeds.count) seeds without a crash or a wrong value; \(accepted) read "
                + "at least one right value; \(String(format: "%.1f", seconds)) s")
    }
}
