import Dispatch

/// Monotonic wall-clock time in nanoseconds (CLOCK_MONOTONIC through Dispatch).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Runs `body` once and returns the elapsed wall-clock time in nanoseconds.
@inline(__always)
func measureNanoseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = monotonicNanoseconds()
    try body()
    return Double(monotonicNanoseconds() - start)
}

/// Runs `body` once and returns the elapsed wall-clock time in nanoseconds.
@inline(__always)
func measureNanosecondsAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = monotonicNanoseconds()
    try await body()
    return Double(monotonicNanoseconds() - start)
}

/// Runs `body`, which performs `operations` operations, and returns nanoseconds per operation.
@inline(__always)
func nanosecondsPerOperation(_ operations: Int, _ body: () throws -> Void) rethrows -> Double {
    try measureNanoseconds(body) / Double(operations)
}

/// Runs `body`, which performs `operations` operations, and returns nanoseconds per operation.
@inline(__always)
func nanosecondsPerOperationAsync(_ operations: Int, _ body: () async throws -> Void) async rethrows -> Double {
    try await measureNanosecondsAsync(body) / Double(operations)
}
