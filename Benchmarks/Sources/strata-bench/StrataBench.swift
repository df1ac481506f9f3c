import Foundation

/// `strata-bench`: Strata against its baselines, measured in one process, printed as ratios.
@main
enum StrataBench {
    /// Every scenario, in the order a full run prints them.
    static let scenarios: [Scenario] = [
        MemoryGetHit.scenario,
        MemorySetEvict.scenario,
        MemoryVersusNSCache.scenario,
        MemoryConcurrent.scenario,
        MemoryOverhead.scenario,
        LRUHitRatio.scenario,
        PolicyHitRatio.scenario,
        PolicyCost.getHit,
        PolicyCost.setEvict,
        PolicyCost.concurrent,
        MultiCacheHit.scenario,
        LoadOptionsRows.scenario,
        TierLoadRows.scenario,
        TagRows.scenario,
        DiskSet4K.scenario,
        DiskSetEvict.scenario,
        DiskGet4K.scenario,
        DiskGet1M.scenario,
        DiskSQLite1M.scenario,
        DiskOpen.scenario,
        DiskPeer.scenario,
        DiskValueMemory.scenario,
        RedisTierRows.scenario,
        RedisLeaseRows.scenario,
        RedisTLSRows.scenario,
        RedisInvalidationRows.scenario,
        RedisClusterRows.scenario,
    ]

    static func main() {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            let message = "\(error)"
            FileHandle.standardError.write(Data(((message.isEmpty ? "" : message + "\n") + Options.usage + "\n").utf8))
            exit(message.isEmpty ? 0 : 2)
        }
        if let footprint = options.footprint {
            do {
                try FootprintProbe.runAsChild(footprint.kind, entryCount: footprint.entryCount)
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("strata-bench --footprint: \(error)\n".utf8))
                exit(1)
            }
        }
        if let probe = options.valueMemory {
            do {
                try DiskValueMemory.Probe.runAsChild(probe.kind, bytes: probe.bytes, directory: probe.directory)
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("strata-bench --value-memory: \(error)\n".utf8))
                exit(1)
            }
        }
        if let worker = options.loadWorker {
            do {
                try DiskLoadWorker.run(worker)
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("strata-bench --load-worker: \(error)\n".utf8))
                exit(1)
            }
        }
        if let traceDirectory = options.traceDirectory {
            do {
                let directory = URL(fileURLWithPath: traceDirectory, isDirectory: true)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for trace in PolicyTrace.suite(
                    keyCount: 100_000, length: 1_000_000, capacities: PolicyHitRatio.capacities)
                {
                    print(try trace.write(to: directory).path)
                }
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("strata-bench --write-traces: \(error)\n".utf8))
                exit(1)
            }
        }
        if options.listOnly {
            for scenario in scenarios { print(scenario.names.joined(separator: "\n")) }
            return
        }
        let selected = scenarios.filter { $0.names.contains(where: options.selects) }
        if selected.isEmpty {
            FileHandle.standardError.write(Data("strata-bench: no scenario matches \(options.filters)\n".utf8))
            exit(2)
        }

        let workDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-bench-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        let context = RunContext(quick: options.quick, workDirectory: workDirectory, hashSeeds: options.hashSeeds)

        print("strata-bench \(options.quick ? "--quick " : "")(\(ProcessInfo.processInfo.activeProcessorCount) CPUs)")
        print(Report.header)
        let start = monotonicNanoseconds()
        var (results, failures) = runBlocking { await run(selected, context: context, options: options) }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        print(
            "\n\(results.count) rows in \(formatNumber(seconds)) s; ratio = Strata's cost over the baseline's "
                + "(lower is better; for % hits, Strata over the reference)\n")
        print(Report.markdown(results))

        if let path = options.jsonPath {
            do {
                try Report.writeJSON(results, to: path)
            } catch {
                FileHandle.standardError.write(Data("strata-bench: cannot write \(path): \(error)\n".utf8))
                failures += 1
            }
        }
        try? FileManager.default.removeItem(at: workDirectory)
        // Speed is never a failure here (CI runs --quick on a shared machine); a scenario that threw is.
        exit(failures == 0 ? 0 : 1)
    }
    /// Runs the scenarios in order, printing each row as it is measured; returns the rows and the number
    /// of scenarios that threw.
    private static func run(
        _ selected: [Scenario],
        context: RunContext,
        options: Options
    ) async -> (results: [ScenarioResult], failures: Int) {
        var results: [ScenarioResult] = []
        var failures = 0
        for scenario in selected {
            do {
                let start = monotonicNanoseconds()
                let rows = try await scenario.run(context).filter { options.selects($0.name) }
                let seconds = Double(monotonicNanoseconds() - start) / 1e9
                for row in rows {
                    print(Report.line(for: row))
                    for detail in Report.details(for: row) { print(detail) }
                }
                print("    (\(scenario.names.joined(separator: ", ")): \(formatNumber(seconds)) s with setup)")
                // Rows reach a file or pipe as they are measured, not only when the run ends (nil: every stream).
                fflush(nil)
                results += rows
            } catch {
                failures += 1
                print("\(scenario.names.joined(separator: ", ")): FAILED: \(error)")
            }
        }
        return (results, failures)
    }

    /// Runs `body` on the cooperative pool and blocks the main thread until it finishes.
    ///
    /// The entry point is synchronous on purpose: with an `async` main, the main thread parks in
    /// `dispatch_main`, which valgrind 3.19 cannot follow (it dies with SIGSEGV), and callgrind's
    /// instruction counts are the profile that stays repeatable on a busy machine.
    private static func runBlocking<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) -> Result {
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = PthreadLocked<Result?>(nil)
        Task.detached {
            let value = await body()
            outcome.withLock { $0 = value }
            semaphore.signal()
        }
        semaphore.wait()
        // The task stored its result before signalling, so it is there.
        return outcome.withLock { $0! }
    }
}
