import RedisConnection

/// The RESP3 reply decoder's fuzz target (`STRATA_FUZZ_TARGET=resp`, Docs/Reliability.md).
///
/// The input is decoded twice under small limits: whole, and split in two at an offset taken from its
/// first byte. Both runs must return normally and agree value for value (or both fail): an incremental
/// decoder that answers differently for different splits would match replies to the wrong callers.
///
/// - Returns: Whether the input decoded to at least one reply with no error.
@discardableResult
func fuzzRESP(_ input: [UInt8]) -> Bool {
    let limits = RESPDecoder.Limits(
        maximumBulkLength: 4096, maximumDepth: 8, maximumAggregateCount: 1024, maximumLineLength: 512,
        maximumFrameLength: 16 << 10)
    let whole = decodeAll([input[...]], limits: limits)
    let split = input.isEmpty ? 0 : Int(input[0]) % (input.count + 1)
    let pieces = decodeAll([input[..<split], input[split...]], limits: limits)
    guard whole.values.count == pieces.values.count, whole.failed == pieces.failed,
        zip(whole.values, pieces.values).allSatisfy({ same($0, $1) })
    else {
        // A disagreement is a decoder bug: stop here so libFuzzer keeps the input.
        fatalError("RESP decoder answered differently for the split at \(split)")
    }
    return !whole.failed && !whole.values.isEmpty
}

private func decodeAll(
    _ pieces: [ArraySlice<UInt8>], limits: RESPDecoder.Limits
) -> (
    values: [RESPValue], failed: Bool
) {
    var decoder = RESPDecoder(limits: limits)
    var values: [RESPValue] = []
    for piece in pieces {
        decoder.append(piece)
        do {
            while let value = try decoder.next() { values.append(value) }
        } catch {
            return (values, true)
        }
    }
    return (values, false)
}

/// Equality that counts two NaNs as the same reply.
private func same(_ left: RESPValue, _ right: RESPValue) -> Bool {
    if case .double(let a) = left, case .double(let b) = right, a.isNaN, b.isNaN { return true }
    return left == right || "\(left)" == "\(right)"
}
