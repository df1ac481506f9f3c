// Must be flagged: code inside a string interpolation runs too.
func describe(_ bytes: [UInt8]) -> String {
    "decoded: \(String(validating: bytes, as: UTF8.self) ?? "-")"  // FLAG
}
