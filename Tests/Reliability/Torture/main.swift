import Foundation

#if canImport(Glibc)
import Glibc
#endif

// strata-torture: the process-level reliability scenarios of Docs/Reliability.md. Each subcommand prints
// `figure …` lines, `FAILURE …` lines for broken expectations, and a final `PASS name` or `FAIL name`, and
// exits 0 only when every expectation held. Child roles (`crash-writer`, `crash-check`) are started by the
// scenarios themselves.

// A child that exits early must not take the harness down through a write to its closed stdin.
signal(SIGPIPE, SIG_IGN)

let usage = """
    usage: StrataTorture <scenario> [--option value ...]
      crash        --iterations 200 --keys 64 --window-ms 200 --seed 1
      corruption   --mutations 2000 --keys 64 --seed 1
      multiprocess --strata PATH --workers 4 --seconds 20 --keys 24 --max-bytes 262144 --engine files|sqlite --seed 1
      fulldisk     --mount DIR (a small tmpfs this process may fill)
      readonly     --store DIR (a store on a file system mounted read-only; see run scripts)
      privacy      --strata PATH --keys 32 --seed 1
      hostile      --strata PATH --rounds 60 --seed 1
      sqlite-crash --iterations 200 --keys 64 --window-ms 200 --migrate-every 5 --migrate-window-ms 60 --seed 1
      sqlite-tampering --tamperings 1000 --keys 48 --seed 1
      first-use    --strata PATH --rounds 50 --processes 12 --migrated-keys 16 --mix all|migrate --seed 1
    """

let arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
do {
    let options = try Options(arguments.dropFirst())
    let status: Int32
    switch scenario {
    case "crash": status = try CrashConsistency.run(options)
    case "crash-writer": status = try CrashConsistency.writer(options)
    case "crash-check": status = try CrashConsistency.check(options)
    case "corruption": status = try Corruption.run(options)
    case "multiprocess": status = try MultiProcess.run(options)
    case "fulldisk": status = try FullDisk.runOutOfSpace(options)
    case "readonly-prepare": status = try FullDisk.prepareReadOnly(options)
    case "readonly": status = try FullDisk.runReadOnly(options)
    case "privacy": status = try Privacy.run(options)
    case "wipe-child": status = try Privacy.wipeChild(options)
    case "hostile": status = try Hostile.run(options)
    case "sqlite-crash": status = try SQLiteCrash.run(options)
    case "sqlite-crash-writer": status = try SQLiteCrash.writer(options)
    case "sqlite-migrate-child": status = try SQLiteCrash.migrateChild(options)
    case "sqlite-crash-check": status = try SQLiteCrashCheck.run(options)
    case "sqlite-tampering": status = try SQLiteTampering.run(options)
    case "first-use": status = try FirstUse.run(options)
    default:
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        status = 2
    }
    exit(status)
} catch {
    print("FAIL \(scenario): harness error: \(error)")
    exit(3)
}
