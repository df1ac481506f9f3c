// Must be flagged: the implicit member `.init(validating:` where the contextual type is String.
func decode(_ bytes: [UInt8]) -> String? {
    let text: String? = .init(validating: bytes, as: UTF8.self)  // FLAG
    return text
}
