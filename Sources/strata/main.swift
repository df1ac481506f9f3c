import Foundation

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
DescriptorHygiene.recordInherited()
exit(Runner.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
