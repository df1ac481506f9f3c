#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A heap buffer handed out without zero-filling it, then passed to a `Data` without a copy; freed
/// here if it never is.
final class UninitializedBytes {
    let buffer: UnsafeMutableRawBufferPointer
    private var owned = true

    init(count: Int) {
        buffer = .allocate(byteCount: max(count, 0), alignment: 16)
    }

    /// The bytes in `range` as `Data`, which takes over the whole buffer and frees it when the `Data`
    /// goes (call once, after filling those bytes; an empty range frees the buffer now).
    func take(_ range: Range<Int>) -> Data {
        guard let base = buffer.baseAddress, !range.isEmpty else { return Data() }
        owned = false
        let offset = range.lowerBound
        return Data(
            bytesNoCopy: base + offset, count: range.count,
            deallocator: .custom { pointer, _ in (pointer - offset).deallocate() })
    }

    deinit {
        if owned { buffer.deallocate() }
    }
}
