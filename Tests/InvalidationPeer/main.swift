// The second process of the two-process invalidation tests (Tests/RedisCacheTests/RedisInvalidationProcessTests.swift):
// a `MultiCache([memory, redis])` driven by one command per line on standard input, answering one line each
// on standard output.
//
//   strata-invalidation-peer PORT NAMESPACE MASTER-KEY-BASE64 [TRACKING-PORT]
// (TRACKING-PORT: where the tracking connection goes, e.g. a second proxy; PORT by default)
//   get K          -> "value V" or "nil"         (through the MultiCache)
//   peek K         -> "value V" or "nil"         (the memory tier alone)
//   count          -> "count N"                  (entries in the memory tier)
//   set K V        -> "ok"
//   untag T        -> "ok"                       (removeAll(taggedWith: T) through the MultiCache)
//   rm K           -> "ok"                       (removeEntry(forKey: K) through the MultiCache)
//   clear          -> "ok"                       (removeAll() through the MultiCache)
//   await K        -> "invalidated K"            (once an invalidation of K was applied; at most 10 s, else "timeout")
//   flushes        -> "flushes N"                (how many `.all` were applied to the memory tier so far)
//   awaitflush N   -> "flushes M"                (once M > N; at most 10 s, then M = N)
//   health         -> "tracking 0|1 connects C losses L corrupt X"   (the Redis tier's health)
//   settle         -> "settled"                  (once every write the server ran so far was applied here)
//   stampede K N   -> "runs R values C"          (N concurrent loads of K through the MultiCache, a loader of
//                                                  20 ms: R runs of it here, C callers given "loaded-K")
//   hold K         -> "holding"                  (once a load of K, holding its lease, runs a loader that never
//                                                  ends: for a test that kills this process mid-load)
// The environment's STRATA_PEER_LEASE_SECONDS sets the lease's duration (its wait is then 60 s).
//   quit
// It prints "ready" once its tracking connection is on. Any error prints "error …" instead of an answer.
import CacheCore
import Foundation
import MemoryCache
import MultiCache
import RedisCache

/// Writes one answer line, unbuffered.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard (4...5).contains(arguments.count), let port = Int(arguments[1]),
    let masterKey = Data(base64Encoded: arguments[3])
else {
    FileHandle.standardError.write(
        Data("usage: strata-invalidation-peer PORT NAMESPACE MASTER-KEY-BASE64 [TRACKING-PORT]\n".utf8))
    exit(2)
}
var configuration = RedisCacheConfiguration(port: port, namespace: arguments[2], masterKeySource: .masterKey(masterKey))
configuration.trackingPort = arguments.count == 5 ? Int(arguments[4]) : nil
configuration.connectTimeout = .seconds(2)
configuration.readTimeout = .seconds(5)
configuration.writeTimeout = .seconds(5)
if let seconds = ProcessInfo.processInfo.environment["STRATA_PEER_LEASE_SECONDS"].flatMap({ Int($0) }) {
    configuration.loadLease = .init(duration: .seconds(seconds), maximumWait: .seconds(60))
}
let memory = try MemoryCache<String, String>(countLimit: 1_000)
let redis = try RedisCache<String, String>(configuration: configuration)
let cache = try MultiCache<String, String>([memory, redis])
let applied = Applied()
cache.observeAppliedInvalidations { applied.record($0) }

/// Returns once every write the server ran so far has been applied here: a marker written through the
/// tier comes back after every earlier push. A marker covered by a queued `.all` comes back as that
/// `.all`; then another one is written.
func settle() async throws -> Bool {
    for _ in 0..<10 {
        let marker = "marker-\(UUID().uuidString)"
        try await redis.setValue("m", forKey: marker)
        switch applied.await(marker, orAll: true) {
        case .key: return true
        case .all: continue
        case .timeout: return false
        }
    }
    return false
}

// Tracking is on, then settled (the `.all` published when tracking started has been applied).
let trackingDeadline = Date().addingTimeInterval(10)
while !redis.health.isTracking && Date() < trackingDeadline { usleep(2_000) }
guard redis.health.isTracking, try await settle() else {
    say("timeout")
    exit(1)
}
say("ready")

/// Answers one command line.
func answer(_ line: String) async throws -> String {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch (words.first, words.count) {
    case ("get", 2): return try await cache.value(forKey: words[1]).map { "value \($0)" } ?? "nil"
    case ("peek", 2): return memory.value(forKey: words[1]).map { "value \($0)" } ?? "nil"
    case ("count", 1): return "count \(memory.count)"
    case ("set", 3):
        try await cache.setValue(words[2], forKey: words[1])
        return "ok"
    case ("untag", 2):
        try await cache.removeAll(taggedWith: words[1])
        return "ok"
    case ("rm", 2):
        try await cache.removeEntry(forKey: words[1])
        return "ok"
    case ("clear", 1):
        try await cache.removeAll()
        return "ok"
    case ("await", 2): return applied.await(words[1]) == .key ? "invalidated \(words[1])" : "timeout"
    case ("flushes", 1): return "flushes \(applied.flushes)"
    case ("awaitflush", 2):
        guard let seen = Int(words[1]) else { return "bad command: \(line)" }
        return "flushes \(applied.awaitFlush(after: seen))"
    case ("health", 1):
        let health = redis.health
        return "tracking \(health.isTracking ? 1 : 0) connects \(health.trackingConnects) "
            + "losses \(health.trackingLosses) corrupt \(health.corruptEntries)"
    case ("settle", 1): return try await settle() ? "settled" : "timeout"
    case ("hold", 2):
        return await withCheckedContinuation { continuation in
            Task {
                _ = try? await cache.value(forKey: words[1], expiry: .seconds(600)) {
                    continuation.resume(returning: "holding")
                    try await Task.sleep(for: .seconds(3_600))
                    return "never"
                }
            }
        }
    case ("stampede", 3):
        guard let callers = Int(words[2]) else { return "bad command: \(line)" }
        return try await stampede(words[1], callers: callers)
    default: return "bad command: \(line)"
    }
}

/// Runs `callers` concurrent loads of `key` and reports how often this process's loader ran and how many
/// callers got its value (issue 27's fleet test: the loader should run once across every peer).
func stampede(_ key: String, callers: Int) async throws -> String {
    let runs = Locked(0)
    let expected = "loaded-\(key)"
    let values = try await withThrowingTaskGroup(of: String.self) { group in
        for _ in 0..<callers {
            group.addTask {
                try await cache.value(forKey: key, expiry: .seconds(600)) {
                    runs.withLock { $0 += 1 }
                    try await Task.sleep(for: .milliseconds(20))
                    return expected
                }
            }
        }
        return try await group.reduce(into: 0) { count, value in count += value == expected ? 1 : 0 }
    }
    return "runs \(runs.withLock { $0 }) values \(values)"
}

while let line = readLine() {
    if line == "quit" { exit(0) }
    do {
        say(try await answer(line))
    } catch {
        // One line per command, always: a failed command must not leave the test waiting.
        say("error \(error)".replacingOccurrences(of: "\n", with: " "))
    }
}
