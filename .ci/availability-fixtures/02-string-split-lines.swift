// Must be flagged: `String(` and `validating:` on separate lines.
func decode(_ bytes: [UInt8]) -> String? {
    String(  // FLAG
        validating: bytes, as: UTF8.self)
}
