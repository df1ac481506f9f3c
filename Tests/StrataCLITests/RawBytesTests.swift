import Foundation
import Testing

/// Arguments, environment values and working directories that are not UTF-8 reach `strata` and the
/// commands it runs byte for byte, and different bytes never share an entry.
///
/// `Process` only takes Swift strings, so these tests go through `/bin/sh`, which makes the bytes with
/// `printf '\377'` (0xff) and `printf '\376'` (0xfe).
@Suite(.serialized)
struct RawBytesTests {
    @Test func keyThatIsNotUTF8IsAUsageErrorNamingIt() throws {
        // Given two keys that differ only in a byte that is not UTF-8
        let harness = try StrataHarness()

        // When each is used
        let set = try harness.runShell(#""$STRATA" --store "$STORE" set "$(printf '\377')" AAA"#)
        let get = try harness.runShell(#""$STRATA" --store "$STORE" get "$(printf '\376')""#)

        // Then both are usage errors naming the byte, and nothing was stored
        for (result, byte) in [(set, "\\xff"), (get, "\\xfe")] {
            #expect(result.status == 2)
            #expect(result.standardOutput.isEmpty)
            #expect(
                result.errorLines.first
                    == "strata: the key '\(byte)' is not valid UTF-8 (keys are text; values may be any bytes)")
            #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata ") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func valueGivenOnTheCommandLineIsStoredAsItsRawBytes() throws {
        let harness = try StrataHarness()
        let set = try harness.runShell(#""$STRATA" --store "$STORE" set v "$(printf '\377\376A')""#)
        #expect(set.status == 0)
        let get = try harness.run(["get", "v"])
        #expect(get.status == 0)
        #expect(get.standardOutput == Data([0xFF, 0xFE, 0x41]))
    }

    @Test func execPassesRawArgumentsAndKeysDifferentBytesApart() throws {
        // Given printf run with 0xff, then 0xfe, then the four characters \xff
        let harness = try StrataHarness()
        let ff = try harness.runShell(#""$STRATA" --store "$STORE" exec -- printf %s "$(printf '\377')""#)
        let fe = try harness.runShell(#""$STRATA" --store "$STORE" exec -- printf %s "$(printf '\376')""#)
        let literal = try harness.runShell(#""$STRATA" --store "$STORE" exec -- printf %s '\xff'"#)
        let replay = try harness.runShell(#""$STRATA" --store "$STORE" exec -- printf %s "$(printf '\377')""#)

        // Then each command got its exact bytes, and each is its own entry
        #expect(ff.standardOutput == Data([0xFF]))
        #expect(fe.standardOutput == Data([0xFE]))
        #expect(literal.standardOutput == Data("\\xff".utf8))
        #expect(replay.standardOutput == Data([0xFF]))
        let list = try harness.run(["ls"])
        #expect(list.outputText.components(separatedBy: "\n").filter { $0.contains("exec: printf") }.count == 3)
        // ls shows the bytes escaped, in ANSI-C quotes a shell reads back
        #expect(list.outputText.contains("exec: printf %s $'\\xff' (in "))
        #expect(list.outputText.contains("exec: printf %s $'\\xfe' (in "))
        #expect(list.outputText.contains("exec: printf %s '\\xff' (in "))
        // and --json gives the exact bytes as base64
        let json = try harness.run(["ls", "--json"])
        #expect(json.outputText.contains("\"base64\" : \"/w==\""))
        #expect(json.outputText.contains("\"base64\" : \"/g==\""))
    }

    @Test func keyEnvironmentValuesThatDifferInANonUTF8ByteAreDifferentEntries() throws {
        let harness = try StrataHarness()
        let script = #"X="$(printf '\OCTAL')" "$STRATA" --store "$STORE" exec --key-env X -- sh -c 'printf %s "$X"'"#
        let ff = try harness.runShell(script.replacingOccurrences(of: "OCTAL", with: "377"))
        let fe = try harness.runShell(script.replacingOccurrences(of: "OCTAL", with: "376"))
        #expect(ff.standardOutput == Data([0xFF]))
        #expect(fe.standardOutput == Data([0xFE]))
        let list = try harness.run(["ls"])
        #expect(list.outputText.contains("env X=$'\\xff')"))
        #expect(list.outputText.contains("env X=$'\\xfe')"))
    }

    @Test func workingDirectoriesThatDifferInANonUTF8ByteAreDifferentEntries() throws {
        // Given two folders whose names differ only in a byte that is not UTF-8
        let harness = try StrataHarness()
        let script = #"""
            for b in 377 376; do
              d="$ROOT/d$(printf "\\$b")"
              mkdir -p "$d" && (cd "$d" && "$STRATA" --store "$STORE" exec -- pwd)
            done
            """#

        // When pwd is memoized in each
        let result = try harness.runShell(script)

        // Then each ran in its own folder and printed its own name
        let expected =
            Data(harness.root.path.utf8) + Data([0x2F, 0x64, 0xFF, 0x0A])
            + Data(harness.root.path.utf8) + Data([0x2F, 0x64, 0xFE, 0x0A])
        #expect(result.status == 0)
        #expect(result.standardOutput == expected)
        let list = try harness.run(["ls"])
        #expect(list.outputText.contains("/d\\xff)"))
        #expect(list.outputText.contains("/d\\xfe)"))
    }
}
