// The second process of the two-process invalidation tests (Tests/RedisCacheTests/RedisInvalidationProcessTests.swift):
// a `MultiCache([memory, redis])` driven by one command per line on standard input, answering one line each
// on standard output.
//
//   strata-invalidation-peer PORT NAMESPACE MASTER-KEY-BASE64
//   get K          -> "value V" or "nil"         (through the MultiCache)
//   peek K         -> "value V" or "nil"         (the memory tier alone)
//   set K V        -> "ok"
//   untag T        -> "ok"                       (removeAll(taggedWith: T) through the MultiCache)
//   await K        -> "invalidated K"            (once an invalidation of K was applied; at most 10 s, else "timeout")
//   settle         -> "settled"                  (once every write the server ran so far was applied here)
//   quit
// It prints "ready" once its tracking connection is on.
import CacheCore
import Foundation
import MemoryCache
import MultiCache
import RedisCache

/// The keys whose invalidation was applied and not yet awaited, and whoever waits.
final class Applied: @unchecked Sendable {
    // @unchecked Sendable is sound: every property is touched only under `condition`'s lock.
    private let condition = NSCondition()
    private var keys: [String: Int] = [:]
    private var fullCount = 0

    func record(_ invalidation: CacheInvalidation<String>) {
        condition.withLock {
            switch invalidation {
            case .keys(let invalidated): for key in invalidated { keys[key, default: 0] += 1 }
            case .tags, .all: fullCount += 1
            }
            condition.broadcast()
        }
    }

    /// What ``await(_:orAll:)`` saw.
    enum Outcome { case key, all, timeout }

    /// Waits (blocking) until `key` was invalidated (or, with `orAll`, until anything was applied as
    /// `.all`, which consumes every `.all` so far), or until 10 s pass.
    func await(_ key: String, orAll: Bool = false) -> Outcome {
        let deadline = Date().addingTimeInterval(10)
        return condition.withLock {
            while true {
                if let count = keys[key], count > 0 {
                    keys[key] = count - 1
                    return .key
                }
                if orAll, fullCount > 0 {
                    fullCount = 0
                    return .all
                }
                guard condition.wait(until: deadline) else { return .timeout }
            }
        }
    }
}

/// Writes one answer line, unbuffered.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[1]), let masterKey = Data(base64Encoded: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: strata-invalidation-peer PORT NAMESPACE MASTER-KEY-BASE64\n".utf8))
    exit(2)
}
var configuration = RedisCacheConfiguration(port: port, namespace: arguments[2], masterKeySource: .masterKey(masterKey))
configuration.connectTimeout = .seconds(2)
configuration.readTimeout = .seconds(5)
configuration.writeTimeout = .seconds(5)
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
while let line = readLine() {
    let words = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch words.first {
    case "get" where words.count == 2:
        let value = try await cache.value(forKey: words[1])
        say(value.map { "value \($0)" } ?? "nil")
    case "peek" where words.count == 2:
        say(memory.value(forKey: words[1]).map { "value \($0)" } ?? "nil")
    case "set" where words.count == 3:
        try await cache.setValue(words[2], forKey: words[1])
        say("ok")
    case "untag" where words.count == 2:
        try await cache.removeAll(taggedWith: words[1])
        say("ok")
    case "await" where words.count == 2:
        say(applied.await(words[1]) == .key ? "invalidated \(words[1])" : "timeout")
    case "settle":
        say(try await settle() ? "settled" : "timeout")
    case "quit":
        exit(0)
    default:
        say("bad command: \(line)")
    }
}
