import Foundation
import Testing

@testable import strata

/// The progress line of `verify` and `clear`: its text and timing on a terminal (driven by an injected clock
/// and "is a terminal" flag, never a real terminal), and nothing at all where stderr is not a terminal.
@Suite(.serialized)
struct ProgressLineTests {
    /// A clock the test moves and the text the line wrote.
    final class Recorder {
        var time = 100.0
        var written: [String] = []
    }

    private func makeLine(_ recorder: Recorder, isTerminal: Bool, verb: String = "verifying") -> ProgressLine {
        ProgressLine(
            verb: verb, isTerminal: isTerminal, delay: 1, now: { recorder.time },
            write: { recorder.written.append($0) })
    }

    @Test func onATerminalTheLineShowsCountTotalAndRateRewrittenInPlace() {
        // Given a line on a terminal
        let recorder = Recorder()
        let line = makeLine(recorder, isTerminal: true)
        // When work goes on for half a second, it stays silent (a quick command shows nothing)
        recorder.time = 100.5
        line.update(done: 10, total: 5000)
        #expect(recorder.written.isEmpty)
        // Then after two seconds it shows done/total and the rate since the start, after a carriage return
        recorder.time = 102
        line.update(done: 1200, total: 5000)
        #expect(recorder.written == ["\rstrata: verifying 1200/5000 entries, 600/s\u{1B}[K"])
        // And it redraws at most every tenth of a second
        recorder.time = 102.05
        line.update(done: 1230, total: 5000)
        #expect(recorder.written.count == 1)
        recorder.time = 104
        line.update(done: 4000, total: 5000)
        #expect(recorder.written.last == "\rstrata: verifying 4000/5000 entries, 1000/s\u{1B}[K")
        // And finishing erases it
        line.finish()
        #expect(recorder.written.last == "\r\u{1B}[K")
        #expect(recorder.written.count == 3)
    }

    @Test func offATerminalNothingIsEverWritten() {
        // Given a line whose stderr is not a terminal
        let recorder = Recorder()
        let line = makeLine(recorder, isTerminal: false, verb: "clearing")
        // When work runs long and reports often
        for step in 1...50 {
            recorder.time += 0.5
            line.update(done: step * 100, total: 5000)
        }
        line.finish()
        // Then not a byte was written
        #expect(recorder.written.isEmpty)
    }

    @Test func aLineNeverDrawnIsNotErased() {
        let recorder = Recorder()
        let line = makeLine(recorder, isTerminal: true)
        line.update(done: 1, total: 2)
        line.finish()
        #expect(recorder.written.isEmpty)
    }

    @Test func theRateIsWholeEntriesPerSecond() {
        let halfway = ProgressLine.text(verb: "clearing", done: 7, total: 9, seconds: 2)
        #expect(halfway == "strata: clearing 7/9 entries, 4/s")
        let atOnce = ProgressLine.text(verb: "clearing", done: 0, total: 0, seconds: 0)
        #expect(atOnce == "strata: clearing 0/0 entries, 0/s")
    }

    @Test(arguments: [["verify"], ["clear"]])
    func verifyAndClearAddNothingWhenStderrIsNotATerminal(command: [String]) throws {
        // Given a store with entries, and the progress line due at once (STRATA_PROGRESS_DELAY=0)
        let harness = try StrataHarness()
        for index in 0..<20 {
            #expect(try harness.run(["set", "key\(index)", "value"]).status == 0)
        }
        // When verify or clear runs with stderr on a file (the harness's)
        let result = try harness.run(command, extraEnvironment: ["STRATA_PROGRESS_DELAY": "0"])
        // Then stderr stays empty and stdout carries only the command's own report
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        let expected = command == ["verify"] ? "checked 20 entries: removed 0 bad, 0 expired\n" : ""
        #expect(result.outputText == expected)
        #expect(try harness.run(["get", "key3"]).status == (command == ["clear"] ? 1 : 0))
    }
}
