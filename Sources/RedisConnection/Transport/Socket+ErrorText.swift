#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

extension Socket {
    /// `code` as a reader can act on it: the system's text and the number, "Connection refused (errno 111)".
    ///
    /// `strerror` may share its buffer between threads on some systems; the text is copied at once, and a
    /// wrong text at worst names another error beside the right number.
    static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}
