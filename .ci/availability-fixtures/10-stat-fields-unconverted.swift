// Must be flagged: stat fields whose C types differ between glibc and Darwin, handed on unconverted (the
// Darwin type-check reads glibc's types, so only this catches them). Converted or compared uses pass.
import Foundation

func size(of info: stat) -> Int {
    let bytes: Int = info.st_size  // FLAG
    let mode: UInt32 = info.st_mode  // FLAG
    _ = Int(info.st_size) + Int(mode) + bytes
    _ = info.st_mode & S_IFMT == S_IFDIR
    return info.st_size  // FLAG
}
