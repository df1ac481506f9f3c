#!/usr/bin/env python3
"""Whole-process start-up rows for the `strata` tool (issue 28, item 2), against baselines built in the same run.

`strata get` is called from shell loops and build scripts, where starting the process is the whole cost, so
these rows time whole processes (spawn to exit, as a shell sees them) rather than calls inside one. Each run
builds its baselines with this machine's `swiftc -O` in a temporary folder:

- `cat`: the same 5 bytes, through the system's `cat`;
- `empty-swift`: a Swift program with an empty `main.swift` (the Swift runtime's own start-up);
- `essentials-read`: a Swift program that imports only FoundationEssentials, reads the 5-byte file with
  `Data(contentsOf:)` and writes it to standard output (the figure the targets are set against);
- `foundation-read`: the same program importing all of Foundation (what loading ICU costs);
- `crypto-read`: `essentials-read` plus what any reader of a sealed value pays to libcrypto: one
  HKDF-SHA256 derivation and one AES-256-GCM encryption of the bytes read, through the EVP interface the
  library uses (the floor a `strata get` cannot go below while its cryptography is OpenSSL's);
- `crypto-read, lean`: `crypto-read` with OpenSSL told to skip its configuration file and its error texts
  (`OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS`), the two parts of its start-up that
  a program may turn off, at a cost the library does not pay (an administrator's OpenSSL settings ignored,
  every OpenSSL error reported as numbers): how low libcrypto's floor can go at all;
- `essentials-read, static` and `crypto-read, static`: the same two programs built with `-static-stdlib`,
  linked as the installed tool is (the like-for-like baselines; the issue's targets were set against the
  default, dynamically linked build, which starts slower).

and times, on a fresh default store under the temporary folder (`XDG_CACHE_HOME`, `XDG_DATA_HOME`):

- `strata get` of a 5-byte hit, and of one under a Cyrillic key (which loads the NFC normalizer from
  libFoundation); `strata exec` replaying a memoized `echo`; `strata --version`; `strata set`
  of a 5-byte value; and with `--before PATH`, the same commands by an older build (on the same store, which
  also checks that the two builds name entries alike).

Every row runs in each round, rows in turn, so a change in the machine's load hits them all; one untimed run
of each row first checks its output. Reported per row: median wall time and the 10th–90th percentile spread,
median CPU time (user + system, from `wait4`; a busy machine moves it far less than wall time),
median peak RSS of five more runs (`/usr/bin/time -f %M`), and whether libFoundation.so or
lib_FoundationICU.so was loaded (`LD_DEBUG=libs`, one extra run). Ratios and the issue's targets follow.
No pass/fail: figures only.

Usage: Benchmarks/startup_rows.py [--strata PATH] [--before PATH] [--runs N] [--json FILE]
(without --strata it runs `swift build -c release --static-swift-stdlib --product strata --toolset
Tools/linux-release.json` in the package root
first: the build Docs/CLI.md's installation section gives).
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALUE = b"hello"
# A key past U+02FF: its canonical bytes need the NFC normalizer, which Linux loads from libFoundation on first
# use (Sources/CacheCore/Internal/UnicodeNFC.swift), so this row shows what that costs.
# Written decomposed (и + U+0306); the older build reads it composed (й), so its row also checks that both builds
# give the key the same canonical bytes.
NFC_KEY = "\u043a\u043b\u044e\u0447\u0438\u0306"
NFC_KEY_COMPOSED = "\u043a\u043b\u044e\u0447\u0439"

ESSENTIALS_SOURCE = """\
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
let data = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
_ = data.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
"""

FOUNDATION_SOURCE = ESSENTIALS_SOURCE.replace("import FoundationEssentials", "import Foundation")

# What opening a sealed entry costs in libcrypto alone: the first EVP fetch of a KDF and of a cipher initializes
# OpenSSL (configuration, providers, name maps), which no reader of an AES-GCM file can skip.
CRYPTO_SOURCE = ESSENTIALS_SOURCE + """\
import COpenSSL
_ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
var key = [UInt8](repeating: 0, count: 32)
var secret = [UInt8](repeating: 7, count: 32)
let kdf = EVP_KDF_CTX_new(EVP_KDF_fetch(nil, "HKDF", nil))
"SHA256".withCString { digest in
    secret.withUnsafeMutableBytes { input in
        let parameters = [
            OSSL_PARAM_construct_utf8_string("digest", UnsafeMutablePointer(mutating: digest), 0),
            OSSL_PARAM_construct_octet_string("key", input.baseAddress, 32), OSSL_PARAM_construct_end(),
        ]
        precondition(EVP_KDF_derive(kdf, &key, 32, parameters) == 1)
    }
}
let cipher = EVP_CIPHER_CTX_new()
let nonce = [UInt8](repeating: 1, count: 12)
precondition(EVP_EncryptInit_ex(cipher, EVP_CIPHER_fetch(nil, "AES-256-GCM", nil), nil, key, nonce) == 1)
var sealed = [UInt8](repeating: 0, count: data.count + 16)
var length: Int32 = 0
data.withUnsafeBytes { bytes in
    precondition(EVP_EncryptUpdate(cipher, &sealed, &length, bytes.baseAddress, Int32(bytes.count)) == 1)
}
"""

# libcrypto's floor with what OpenSSL lets a program skip at start-up skipped (see the docstring).
CRYPTO_LEAN_SOURCE = CRYPTO_SOURCE.replace(
    "UInt64(OPENSSL_INIT_NO_ATEXIT)",
    "UInt64(OPENSSL_INIT_NO_ATEXIT) | UInt64(OPENSSL_INIT_NO_LOAD_CONFIG) | UInt64(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS)")
assert CRYPTO_LEAN_SOURCE != CRYPTO_SOURCE


def build_baselines(folder):
    """Compiles the empty and the reading programs with `swiftc -O`; returns their paths."""
    programs = {}
    for name, source in [("empty-swift", ""), ("essentials-read", ESSENTIALS_SOURCE),
                         ("foundation-read", FOUNDATION_SOURCE), ("crypto-read", CRYPTO_SOURCE),
                         ("crypto-read, lean", CRYPTO_LEAN_SOURCE)]:
        directory = os.path.join(folder, name.replace(", ", "-"))
        os.makedirs(directory)
        with open(os.path.join(directory, "main.swift"), "w") as handle:
            handle.write(source)
        binary = os.path.join(directory, name.replace(", ", "-"))
        # The package's own module map for libcrypto (Sources/COpenSSL), as the library imports it.
        search = ["-I", os.path.join(ROOT, "Sources", "COpenSSL")] if name.startswith("crypto-read") else []
        subprocess.run(["swiftc", "-O", *search, "-o", binary, os.path.join(directory, "main.swift")],
                       check=True)
        programs[name] = binary
        if name in ("essentials-read", "crypto-read"):
            # (-static-stdlib links FoundationEssentials too, and its linker warns about mktemp: not ours.)
            subprocess.run(["swiftc", "-O", "-static-stdlib", *search, "-o", binary + "-static",
                            os.path.join(directory, "main.swift")], check=True, stderr=subprocess.DEVNULL)
            programs[name + ", static"] = binary + "-static"
    return programs


def run_once(argv, env, stdin_data=None):
    """Spawns argv, waits, returns (seconds, CPU seconds, exit status, stdout).

    CPU time is the child's user + system time from `wait4`: on a machine other work keeps busy it moves far
    less than wall time, which includes waiting for a core.
    """
    read_out, write_out = os.pipe()
    read_in, write_in = os.pipe() if stdin_data is not None else (None, None)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(write_out, 1)
        if read_in is not None:
            os.dup2(read_in, 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(write_out)
    if read_in is not None:
        os.close(read_in)
        os.write(write_in, stdin_data)
        os.close(write_in)
    chunks = []
    while True:
        chunk = os.read(read_out, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_out)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), b"".join(chunks)


def peak_rss_kib(argv, env):
    """Peak RSS of one run in KiB, from `/usr/bin/time -f %M`.

    Not from this script's own `wait4`: Linux counts the high-water mark of the forked copy of this Python
    process (about 11 MB) before `exec` in the child's `ru_maxrss`, which would hide what the program itself
    uses. `time` is a small C program, so its fork adds little.
    """
    result = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    return int(result.stderr.decode().strip().splitlines()[-1])


def loads_foundation(argv, env):
    """Which of libFoundation.so and lib_FoundationICU.so the dynamic loader opened for one run."""
    traced = dict(env, LD_DEBUG="libs")
    result = subprocess.run(argv, env=traced, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    text = result.stderr.decode(errors="replace")
    return {
        "libFoundation": "calling init: " in text and "/libFoundation.so" in text,
        "ICU": "lib_FoundationICU.so" in text,
    }


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strata", help="the strata binary (default: build release in the package root)")
    parser.add_argument("--before", help="an older strata binary, timed beside it on the same store")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per row (default 30)")
    parser.add_argument("--json", help="write the rows as JSON to this file")
    arguments = parser.parse_args()

    strata = arguments.strata
    if not strata:
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "strata",
                        "--toolset", "Tools/linux-release.json"],
                       cwd=ROOT, check=True)
        strata = os.path.join(ROOT, ".build", "release", "strata")
    strata = os.path.abspath(strata)
    # Resolved before the runs change into their own working directory.
    before = os.path.abspath(arguments.before) if arguments.before else None

    folder = tempfile.mkdtemp(prefix="strata-startup-")
    try:
        programs = build_baselines(folder)
        value_file = os.path.join(folder, "value")
        with open(value_file, "wb") as handle:
            handle.write(VALUE)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": folder,
            "XDG_CACHE_HOME": os.path.join(folder, "cache"),
            "XDG_DATA_HOME": os.path.join(folder, "data"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
        }
        workdir = os.path.join(folder, "work")
        os.makedirs(workdir)
        os.chdir(workdir)  # exec keys include the working directory: one folder for every run

        # The entry and the memoized command, written once by the binary under test.
        for argv in ([strata, "set", "greeting", VALUE.decode()],
                     [strata, "set", NFC_KEY, VALUE.decode()],
                     [strata, "exec", "--ttl", "1d", "--", "/bin/echo", "hello"]):
            _, _, status, _ = run_once(argv, env)
            if status != 0:
                sys.exit(f"startup_rows: {' '.join(argv)} exited {status}")

        cat = shutil.which("cat") or "/bin/cat"
        rows = [
            ("cat", [cat, value_file]),
            ("empty-swift", [programs["empty-swift"]]),
            ("essentials-read", [programs["essentials-read"], value_file]),
            ("foundation-read", [programs["foundation-read"], value_file]),
            ("crypto-read", [programs["crypto-read"], value_file]),
            ("crypto-read, lean", [programs["crypto-read, lean"], value_file]),
            ("essentials-read, static", [programs["essentials-read, static"], value_file]),
            ("crypto-read, static", [programs["crypto-read, static"], value_file]),
            ("strata get", [strata, "get", "greeting"]),
            ("strata get, Cyrillic key", [strata, "get", NFC_KEY]),
            ("strata exec replay", [strata, "exec", "--ttl", "1d", "--", "/bin/echo", "hello"]),
            ("strata --version", [strata, "--version"]),
            ("strata set", [strata, "set", "other", VALUE.decode()]),
        ]
        if before:
            rows += [
                ("before: strata get", [before, "get", "greeting"]),
                ("before: strata get, Cyrillic key", [before, "get", NFC_KEY_COMPOSED]),
                ("before: strata exec replay", [before, "exec", "--ttl", "1d", "--", "/bin/echo", "hello"]),
                ("before: strata --version", [before, "--version"]),
                ("before: strata set", [before, "set", "other", VALUE.decode()]),
            ]

        # Every row must do what it claims before it is timed: the hit prints the value, the replay echoes.
        expected = {"strata get": VALUE, "strata get, Cyrillic key": VALUE, "strata exec replay": VALUE + b"\n",
                    "cat": VALUE, "essentials-read": VALUE, "foundation-read": VALUE, "crypto-read": VALUE,
                    "essentials-read, static": VALUE, "crypto-read, static": VALUE, "crypto-read, lean": VALUE}
        for name, argv in rows:
            _, _, status, output = run_once(argv, env)
            want = expected.get(name.removeprefix("before: "))
            if status != 0 or (want is not None and output != want):
                sys.exit(f"startup_rows: {name} exited {status} with {output!r}")

        times = {name: [] for name, _ in rows}
        cpu = {name: [] for name, _ in rows}
        peaks = {name: [] for name, _ in rows}
        for _ in range(arguments.runs):
            for name, argv in rows:
                elapsed, used, _, _ = run_once(argv, env)
                times[name].append(elapsed)
                cpu[name].append(used)
        for _ in range(5):
            for name, argv in rows:
                peaks[name].append(peak_rss_kib(argv, env))

        results = []
        for name, argv in rows:
            results.append({
                "row": name,
                "median_ms": statistics.median(times[name]) * 1e3,
                "p10_ms": percentile(times[name], 0.1) * 1e3,
                "p90_ms": percentile(times[name], 0.9) * 1e3,
                "cpu_median_ms": statistics.median(cpu[name]) * 1e3,
                "peak_rss_mb": statistics.median(peaks[name]) / 1024,
                "loads": loads_foundation(argv, env),
                "runs": arguments.runs,
            })
        by_name = {row["row"]: row for row in results}

        header = f"{'row':40} {'median ms':>10} {'p10–p90 ms':>14} {'CPU ms':>7} {'peak RSS MB':>12}"
        print(header + "  libFoundation  ICU")
        for row in results:
            spread = f"{row['p10_ms']:.1f}–{row['p90_ms']:.1f}"
            print(f"{row['row']:40} {row['median_ms']:10.1f} {spread:>14} {row['cpu_median_ms']:7.1f} "
                  f"{row['peak_rss_mb']:12.1f}  {'yes' if row['loads']['libFoundation'] else 'no':>13}  "
                  f"{'yes' if row['loads']['ICU'] else 'no'}")

        def ratio(name, base, key="median_ms"):
            return by_name[name][key] / by_name[base][key]

        targets = [
            ("strata get / essentials-read", "strata get", "essentials-read", "≤ 1.3"),
            ("strata exec replay / strata get", "strata exec replay", "strata get", "≤ 1.1"),
            ("strata --version / essentials-read", "strata --version", "essentials-read", "≤ 1.2"),
            ("crypto-read / essentials-read (libcrypto's floor)", "crypto-read", "essentials-read", "—"),
            ("crypto-read, lean / essentials-read", "crypto-read, lean", "essentials-read", "—"),
            ("strata get / crypto-read", "strata get", "crypto-read", "—"),
            ("strata get / essentials-read, static (like for like)", "strata get", "essentials-read, static", "—"),
            ("crypto-read, static / essentials-read, static", "crypto-read, static", "essentials-read, static", "—"),
            ("strata get / crypto-read, static", "strata get", "crypto-read, static", "—"),
        ]
        print(f"\n{'ratio (wall, then CPU)':56} {'wall':>6} {'CPU':>6}")
        for name, row, base, target in targets:
            print(f"{name:56} {ratio(row, base):5.2f}× {ratio(row, base, 'cpu_median_ms'):5.2f}×   target {target}")
        print(f"{'strata get peak RSS':56} {by_name['strata get']['peak_rss_mb']:5.1f} MB  target ≤ 16 MB "
              f"(crypto-read {by_name['crypto-read']['peak_rss_mb']:.1f} MB)")
        if arguments.before:
            for command in ("strata get", "strata get, Cyrillic key", "strata exec replay", "strata --version",
                            "strata set"):
                print(f"{command + ': before / after':56} {ratio('before: ' + command, command):5.2f}× "
                      f"{ratio('before: ' + command, command, 'cpu_median_ms'):5.2f}×")

        if arguments.json:
            load = os.getloadavg()
            with open(arguments.json, "w") as handle:
                json.dump({
                    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "load_average": load,
                    "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.release()}",
                    "strata": strata,
                    "before": arguments.before,
                    "rows": results,
                    "ratios": {name: {"wall": ratio(row, base), "cpu": ratio(row, base, "cpu_median_ms"),
                                      "target": target} for name, row, base, target in targets},
                }, handle, indent=2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
