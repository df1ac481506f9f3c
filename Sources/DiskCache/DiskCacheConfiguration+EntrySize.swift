extension DiskCacheConfiguration {
    /// The largest entry file any store writes, in bytes: 80 bytes of header, nonce and tag plus a key
    /// and value of together at most 2,147,483,647 bytes (2 GiB − 1, the most one AES-GCM call seals in
    /// the entry format, Docs/DiskFormat.md). A value whose entry would be larger is refused with
    /// ``CacheError/Code/entryTooLarge`` whatever ``byteLimit`` says.
    ///
    /// A tool that reads a value of unknown length (a stream, standard input) can stop reading once it
    /// has more than ``largestEntrySize`` bytes, or more than ``byteLimit`` when that is smaller: no
    /// longer value can be stored. A constant; thread-safe.
    public static let largestEntrySize = EntryRecord.overhead + EntryRecord.maxBodyLength
}
