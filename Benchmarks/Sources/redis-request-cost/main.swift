import CacheCore
import Foundation
import RedisCache

// A fixed amount of Redis-tier work for instruction counting (`valgrind --tool=callgrind`): instruction
// counts stay steady on a busy machine where wall-clock rows do not. Run it twice with two request counts
// against one server; the difference over the difference in requests is the cost of one request, free of
// start-up and set-up. Usage: redis-request-cost <port> <sequential|concurrent> <requests>
let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[1]), let requests = Int(arguments[3]),
    ["sequential", "concurrent"].contains(arguments[2])
else {
    FileHandle.standardError.write(Data("usage: redis-request-cost <port> <sequential|concurrent> <requests>\n".utf8))
    exit(2)
}
// A synchronous main thread that waits on a semaphore: valgrind 3.19 crashes in `dispatch_main`'s
// `sigsuspend`, which an `async` top level would run.
let done = DispatchSemaphore(value: 0)
Task.detached {
    do {
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        var configuration = RedisCacheConfiguration(
            port: port, namespace: "request-cost", masterKeySource: .masterKey(masterKey))
        // Valgrind runs the client many times slower than the server: generous deadlines.
        configuration.readTimeout = .seconds(10)
        configuration.writeTimeout = .seconds(10)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        let value = Data(repeating: 0x5A, count: 16)
        for index in 0..<64 { try await cache.setValue(value, forKey: "key\(index)", expiry: .never) }
        if arguments[2] == "sequential" {
            for _ in 0..<requests {
                guard try await cache.entry(forKey: "key0")?.value == value else { exit(1) }
            }
        } else {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<64 {
                    group.addTask {
                        for _ in 0..<(requests / 64) {
                            guard try await cache.entry(forKey: "key\(task)")?.value == value else { exit(1) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let health = cache.health
        print("requests \(requests) hits \(cache.statistics.hits) connects \(health.connects)")
        FileHandle.standardOutput.synchronizeFile()
        // No `close()`: its wait for the I/O thread hangs under valgrind's serialised threads, and process
        // exit ends the connection anyway.
    } catch {
        FileHandle.standardError.write(Data("redis-request-cost: \(error)\n".utf8))
        exit(1)
    }
    done.signal()
}
done.wait()
