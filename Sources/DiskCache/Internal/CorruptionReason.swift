/// Why an entry file was judged corrupt (see Docs/DiskFormat.md).
enum CorruptionReason: String, Error {
    case truncated = "truncated or empty file"
    case badMagic = "not a Strata entry (bad magic)"
    case unsupportedVersion = "unknown format version"
    case badHeader = "malformed header"
    case lengthMismatch = "file length does not match the header"
    case oldEpoch = "written under an earlier key epoch (before a removeAll)"
    case authenticationFailed = "authentication failed (tampered, bit-flipped or swapped file)"
    case misplaced = "key inside does not match the file name (misplaced file)"
    case badTagBlock = "the tag block inside the value is malformed"
    case tooLarge = "larger than any entry the store writes (over its size limit or 2 GiB)"
    /// The SQLite engine: a row whose value lives in `large/` found no regular file of its size there.
    case valueFileUnusable = "its value file in large/ is missing, not a regular file, or of another size"
}
