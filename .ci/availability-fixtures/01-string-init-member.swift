// Must be flagged by .ci/availability-check.py: String(validating:as:) (macOS 15) spelled `String.init(`.
func decode(_ bytes: [UInt8]) -> String? {
    String.init(validating: bytes, as: UTF8.self)  // FLAG
}
