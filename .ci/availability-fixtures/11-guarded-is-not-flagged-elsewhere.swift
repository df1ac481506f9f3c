// Must be flagged only at the marked line: the guarded uses around it stay quiet, so a checker that flags
// everything does not pass the fixtures either.
func decode(_ bytes: [UInt8]) -> String? {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
        return String(validating: bytes, as: UTF8.self)
    }
    guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else {
        return String(validating: bytes, as: UTF8.self)  // FLAG
    }
    return String(validating: bytes, as: UTF8.self)
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
func decodeNewer(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)
}
