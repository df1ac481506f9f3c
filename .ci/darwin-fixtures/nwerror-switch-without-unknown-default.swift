// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. NWError is not frozen in Apple's SDK
// (https://developer.apple.com/documentation/network/nwerror; later SDKs added cases), so a switch over it needs
// `@unknown default`; exhausting the three cases Strata knows is not enough.
// expect: may have additional unknown values
import Network

func describe(_ error: NWError) -> String {
    switch error {
    case .posix: return "posix"
    case .dns: return "dns"
    case .tls: return "tls"
    }
}
