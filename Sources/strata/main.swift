#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// A closed stdout (`strata get k | head -c1`) must surface as a write error, not kill the process;
// commands started by `exec` get the default disposition back (see ChildProcess).
signal(SIGPIPE, SIG_IGN)
// Raw argv bytes: CommandLine.arguments would turn every byte that is not UTF-8 into U+FFFD.
exit(Runner.run(arguments: RawProcess.arguments, environment: RawProcess.environment))
