#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Converts between `Date` and `timespec` the same way in both directions, so a time written with
/// `futimens` and read back with `stat` compares equal to the in-memory copy.
enum FileTime {
    static func spec(from date: Date) -> timespec {
        let interval = date.timeIntervalSince1970
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        return makeTimespec(seconds: seconds, nanoseconds: nanoseconds)
    }

    static func date(from time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// `date` after a round trip through the file system's representation.
    static func normalized(_ date: Date) -> Date { self.date(from: spec(from: date)) }

    private static func makeTimespec(seconds: Double, nanoseconds: Double) -> timespec {
        // Clamp so a far-future or far-past clock cannot trap on the integer conversion.
        let clampedSeconds = min(max(seconds, -1e15), 1e15)
        var time = timespec()
        time.tv_sec = .init(clampedSeconds)
        time.tv_nsec = .init(min(max(nanoseconds, 0), 999_999_999))
        return time
    }
}
