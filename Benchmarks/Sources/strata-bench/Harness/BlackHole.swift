/// Consumes a value where the optimizer cannot see, so the work that produced it is not removed as dead code.
///
/// `@inline(never)` plus `@_optimize(none)` keeps the call opaque in release builds; the cost (one call)
/// is paid by Strata and its baseline alike, once per batch, not once per operation, wherever a loop can
/// fold its results into one accumulator first.
@inline(never)
@_optimize(none)
func blackHole<T>(_ value: T) {}
