/// The outcome of one read of an ``ShardTable``.
///
/// A plain enum outside the generic table, so that unspecialized code (reached through `any Cache`)
/// passes it around without looking up generic type metadata; the value, expiry and cost travel in
/// `inout` parameters beside it.
@usableFromInline
enum ShardReadStatus {
    /// A live entry; its recency was refreshed and the hit counted.
    case hit
    /// No entry for the key; the miss was counted.
    case miss
    /// The entry can expire, so the read needs a clock reading (nothing was counted or changed).
    case needsClock
    /// The entry had expired and was dropped (counted as a miss and an expiration); its value is handed
    /// back only so that it is released outside the lock.
    case expired
}
