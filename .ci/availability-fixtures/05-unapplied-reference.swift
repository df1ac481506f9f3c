// Must be flagged: an unapplied reference to the initializer.
func decoder() -> ([UInt8], UTF8.Type) -> String? {
    let make = String.init(validating:as:)  // FLAG
    return make
}
