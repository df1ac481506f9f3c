import CBenchSupport
import Foundation

/// Process memory figures for the overhead scenario.
enum ResidentMemory {
    /// Resident set size in bytes, from the second field of /proc/self/statm (pages); `nil` off Linux.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Bytes the C heap has handed out and not taken back (mallinfo2: arena in use plus mmapped blocks);
    /// `nil` off glibc. Unlike RSS it does not count memory freed to malloc but kept by it.
    static func heapBytesInUse() -> Int? {
        let bytes = strata_bench_heap_bytes_in_use()
        return bytes < 0 ? nil : Int(bytes)
    }

    /// Gives freed heap memory back to the system, so that the next RSS reading starts from a low point.
    static func trimHeap() {
        strata_bench_trim_heap()
    }
}
