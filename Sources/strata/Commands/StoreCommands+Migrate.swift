import DiskCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension StoreCommands {
    /// `strata migrate`: moves the store to the SQLite engine in place
    /// (`DiskCacheConfiguration.migrateStoreToSQLite`), with a progress line on a terminal.
    ///
    /// - Returns: 0, after printing how many entries the store holds on its new engine (or that it already
    ///   used SQLite).
    /// - Throws: `CLIFailure.store` when the store cannot be opened or the copy stopped (the store is then
    ///   still the file store; running the command again resumes).
    static func migrate(location: StoreLocation) throws(CLIFailure) -> Int32 {
        let progress = ProgressLine(verb: "migrating", isTerminal: StandardStreams.isTerminal(STDERR_FILENO), delay: 1)
        let moved: Int
        do {
            moved = try location.configuration.migrateStoreToSQLite(progress: progress.update)
        } catch {
            throw CLIFailure.store(error, store: location.displayPath)
        }
        progress.finish()
        let line =
            moved == 0
            ? "the store already uses the SQLite engine (or holds nothing to move)\n"
            : "moved \(moved) \(moved == 1 ? "entry" : "entries") to the SQLite engine\n"
        guard StandardStreams.printOutput(line) else { throw .outputWriteFailed(errno: errno) }
        return ExitStatus.success
    }
}
