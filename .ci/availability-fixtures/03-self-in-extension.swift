// Must be flagged: `Self(validating:` inside an extension of String, and `self.init(validating:`.
extension String {
    static func decoded(_ bytes: [UInt8]) -> String? {
        Self(validating: bytes, as: UTF8.self)  // FLAG
    }

    init?(utf8Bytes bytes: [UInt8]) {
        self.init(validating: bytes, as: UTF8.self)  // FLAG
    }
}
