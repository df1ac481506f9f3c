/// The floor's figures printed beside a disk row (see ``FloorStore`` for what the floor is).
///
/// The floor ratio is the floor's cost over the baseline's, in the row's own convention (ns/op over ns/op,
/// or baseline MB/s over floor MB/s). When it alone exceeds the row's ratio limit, no AES-256-GCM cache with
/// one file per entry can meet that target on this machine, and the row says so with the figure.
enum FloorFigures {
    static func extras(
        unit: MetricUnit, strata: Summary, baseline: Summary, floor: Summary?
    ) -> [(label: String, value: Double)] {
        guard let floor else { return [] }
        return [
            ("floor \(unit.rawValue)", floor.median),
            ("floor ratio", costRatio(unit, floor.median, baseline.median)),
            ("strata/floor", costRatio(unit, strata.median, floor.median)),
        ]
    }

    /// A note when the floor alone misses `ratioLimit`, or when there is no floor on this platform.
    static func notes(unit: MetricUnit, baseline: Summary, floor: Summary?, ratioLimit: Double?) -> [String] {
        guard let floor else { return ["floor skipped: libcrypto is not linked on this platform"] }
        let floorRatio = costRatio(unit, floor.median, baseline.median)
        let explanation =
            "floor = the baseline's file I/O + HMAC-SHA-256 file name + AES-256-GCM (libcrypto EVP, no Strata "
            + "code); floor ratio = floor/baseline cost"
        guard let ratioLimit, floorRatio > ratioLimit else { return [explanation] }
        return [
            explanation,
            "target unreachable with AES-256-GCM on this machine: the floor alone is \(formatNumber(floorRatio))× "
                + "the baseline (limit \(formatLimit(ratioLimit)))",
        ]
    }

    /// `cost` over `reference` as costs: inverted for throughputs, where the larger number is the cheaper.
    static func costRatio(_ unit: MetricUnit, _ cost: Double, _ reference: Double) -> Double {
        unit.higherIsBetter ? reference / cost : cost / reference
    }
}
