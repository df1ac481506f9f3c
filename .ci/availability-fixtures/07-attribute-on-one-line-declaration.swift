// Must be flagged: an `@available` on a one-line declaration guards that declaration only, not the next `{`.
enum Holder {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) static let x = 1
    static func decode(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)  // FLAG
    }
}
