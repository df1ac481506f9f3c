// Must be flagged: the `else` branch of an `if #available` is not guarded, even on the same line.
func decode(_ bytes: [UInt8]) -> String? {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) { return nil } else { return String(validating: bytes, as: UTF8.self) }  // FLAG
}
