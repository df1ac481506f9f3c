#!/usr/bin/env python3
"""The mutation gate: every mutant in Tests/Mutants/*.mutants must be killed by the tests its entry names.

For each mutant it replaces one exact line of one source file in a scratch copy of the tree, builds the
debug tests incrementally (seconds: only the touched file recompiles), runs the test binary with the
entry's filter (as `swift test --skip-build --filter` would), and restores the line. A mutant is killed
when that run fails (its first recorded issue ends it), crashes or exceeds its time limit; it survives
when the run passes. Any survivor fails the gate.

Before any mutant, each distinct filter is run once on the unmutated copy: it must pass and run at least
one test, so that a filter that matches nothing (a renamed test) cannot pass for a kill. A mutant whose
line is not found exactly once, or whose mutated form does not compile, is an error in the list and also
fails the gate: the list must follow the code.

Usage: .ci/mutation-gate.py [--list FILE ...] [--only NAME ...] [--scratch DIR] [--keep-going]
Docs/Testing.md ("The mutation gate") says how to add a mutant.
"""

import argparse
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ("file", "line", "mutant", "filter", "why")
TEST_RUN = re.compile(r"Test run with (\d+) tests?")
# Swift Testing's line for an issue a test records (a failed expectation, a thrown error); a known issue
# reads "recorded a known issue".
FIRST_ISSUE = re.compile("\u2718.* recorded an issue")


@dataclass
class Mutant:
    name: str
    source: str  # the .mutants file and line where the entry starts, for messages
    file: str
    line: str
    mutant: str
    filter: str
    why: str
    timeout: int = 300


def parse(path: Path) -> list[Mutant]:
    """Reads entries of the form `## name` followed by `key: value` lines (FIELDS, optional `timeout`)."""
    mutants, current, start = [], None, 0
    try:
        text = path.read_text()
    except OSError as error:
        sys.exit(f"mutation gate: cannot read the list {path}: {error.strerror or error}")

    def close():
        if current is None:
            return
        where = f"{path}:{start}: mutant '{current['name']}'"
        missing = [f for f in FIELDS if not current.get(f)]
        if missing:
            sys.exit(f"{where} lacks {', '.join(missing)} (or has it empty)")
        timeout = current.get("timeout", "300")
        if not timeout.isdigit() or int(timeout) == 0:
            sys.exit(f"{where}: timeout must be a positive whole number of seconds, not {timeout!r}")
        relative = Path(current["file"])
        resolved = (ROOT / relative).resolve()
        if relative.is_absolute() or ".." in relative.parts or not resolved.is_relative_to(ROOT):
            sys.exit(f"{where}: file must be a path inside the repository, relative to its root")
        if not resolved.is_file():
            sys.exit(f"{where}: no file {current['file']}")
        mutants.append(
            Mutant(current["name"], f"{path.name}:{start}", *(current[f] for f in FIELDS), int(timeout)))

    for number, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("## "):
            close()
            current, start = {"name": raw[3:].strip()}, number
        elif raw.strip() == "" or raw.lstrip().startswith("#"):
            continue
        elif current is not None and ":" in raw:
            key, value = raw.split(":", 1)
            key = key.strip()
            if key not in FIELDS + ("timeout",):
                sys.exit(f"{path}:{number}: unknown field '{key}'")
            if key in current:
                sys.exit(f"{path}:{number}: field '{key}' given twice in mutant '{current['name']}'")
            current[key] = value.strip()
        else:
            sys.exit(f"{path}:{number}: expected '## name' or 'key: value', got {raw!r}")
    close()
    return mutants


MARKER = ".mutation-gate-scratch"


def check_scratch(scratch: Path) -> None:
    """Refuses a scratch folder whose files the copy would delete: the tree itself, a folder holding it, a
    folder inside the tree outside `.build`, or a folder elsewhere with files in it that is not an earlier
    scratch copy (a copy leaves a marker file)."""
    scratch = scratch.resolve()
    if scratch == ROOT or ROOT.is_relative_to(scratch):
        sys.exit(f"mutation gate: the scratch folder {scratch} holds the repository; name an empty or scratch folder")
    if scratch.is_relative_to(ROOT) and not scratch.is_relative_to(ROOT / ".build"):
        sys.exit(f"mutation gate: a scratch folder inside the repository must be under .build, not {scratch}")
    inside_build = scratch.is_relative_to(ROOT / ".build")
    if not inside_build and scratch.exists() and any(scratch.iterdir()) and not (scratch / MARKER).exists():
        sys.exit(f"mutation gate: {scratch} is not empty and is not a scratch copy of an earlier run; "
                 f"name an empty folder")


def scratch_copy(scratch: Path) -> None:
    """Mirrors the tracked (and untracked, not ignored) files into `scratch`, keeping its .build."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    wanted = {name for name in listed if name and (ROOT / name).is_file()}
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / MARKER).touch()
    for name in wanted:
        source, target = ROOT / name, scratch / name
        if target.exists() and target.read_bytes() == source.read_bytes():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    # Files deleted from the tree since the last run would still compile in the copy.
    for path in scratch.rglob("*"):
        relative = path.relative_to(scratch).as_posix()
        if relative.startswith(".build") or relative == MARKER or not path.is_file():
            continue
        if relative not in wanted:
            path.unlink()


def build(scratch: Path) -> subprocess.CompletedProcess:
    # The test product alone (with the executables the tests run, such as `strata`), not the reliability
    # tools: a mutant's build then relinks only what its filter can observe.
    return subprocess.run(["swift", "build", "--product", "StrataPackageTests"], cwd=scratch, capture_output=True,
                          text=True)


@functools.cache
def test_binary(scratch: Path) -> Path:
    """The debug test binary that `build` links, in the scratch copy's build folder."""
    shown = subprocess.run(["swift", "build", "--show-bin-path"], cwd=scratch, check=True, capture_output=True,
                           text=True).stdout.strip()
    return Path(shown) / "StrataPackageTests.xctest"


class Interrupted(Exception):
    """The gate was told to stop (SIGINT, SIGTERM) or its test runner was killed by a signal."""


def run_tests(scratch: Path, pattern: str, timeout: int, first_issue_ends: bool = False) -> tuple[str, int, str]:
    """Returns ("passed" | "failed" | "timeout", number of tests run, the runner's output).

    The run gets a process group of its own, so that a time limit ends the test binary and every process a
    test started (the `strata` tool, servers), not only `swift test`. With `first_issue_ends` (a mutant's
    run) the run ends as "failed" at the first issue a test records: the verdict is the one the whole run
    would reach, and a mutant that makes tests wait out their own time limits (a push that never comes, a
    lease never released) costs one wait instead of every test's. A known issue (`withKnownIssue`) is
    printed as "recorded a known issue" and does not end the run.
    """
    # The test binary itself, as `swift test --skip-build --filter` starts it: `swift test` holds back the
    # binary's output until it exits, so the first issue could not be seen while the run goes on.
    process = subprocess.Popen(
        [str(test_binary(scratch)), "--filter", pattern, "--testing-library", "swift-testing"],
        cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "SWIFT_BACKTRACE": "enable=no", "NO_COLOR": "1"})
    lines: list[str] = []
    issue = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line)
            if first_issue_ends and FIRST_ISSUE.search(line):
                issue.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        reader.join(timeout)
        if issue.is_set():
            kill_group(process)
            return "failed", 0, "".join(lines)
        if reader.is_alive():
            kill_group(process)
            return "timeout", 0, ""
        process.wait()
    except BaseException:
        kill_group(process)
        raise
    output = "".join(lines)
    # A crash (a trap, an abort) fails the run like a failed expectation; a kill from outside stops the gate.
    if -process.returncode in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        raise Interrupted(f"the test runner was killed by signal {-process.returncode}")
    counts = [int(n) for n in TEST_RUN.findall(output)]
    return ("passed" if process.returncode == 0 else "failed"), sum(counts), output


def kill_group(process: subprocess.Popen) -> None:
    """Kills the run's process group and every process descended from it, wherever its group is.

    `swift test` starts the test binary in a process group of its own (SwiftPM's default), so a kill of
    the run's group alone left the binary, and the servers its tests started, running after a time limit.
    The tree is read before anything is killed: once a parent dies its children move to init.
    """
    victims = descendants(process.pid)
    for pid in [process.pid, *victims]:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    # wait, not communicate: a reader thread may still hold the pipe, and a killed run's output is not needed.
    process.wait()


def descendants(root: int) -> list[int]:
    """The processes below `root` in the process tree, read from /proc (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            # The command name, in parentheses, may hold spaces: the fields after its last ")" are fixed.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def locate(text: str, mutant: Mutant) -> int:
    """The index of the one line whose stripped text is the entry's `line`; exits on none or several."""
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if line.strip() == mutant.line]
    if len(hits) != 1:
        sys.exit(f"{mutant.source}: mutant '{mutant.name}': the line occurs {len(hits)} times in {mutant.file} "
                 f"(it must occur exactly once; the list must follow the code)")
    return hits[0]


def stop(signum, frame):
    raise Interrupted(f"stopped by signal {signum}")


def main() -> int:
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", nargs="*", type=Path, help="mutant files (default: Tests/Mutants/*.mutants)")
    parser.add_argument("--only", nargs="*", help="run only the mutants with these names")
    parser.add_argument("--scratch", type=Path, default=ROOT / ".build" / "mutation-scratch",
                        help="where the scratch copy is built (default .build/mutation-scratch); elsewhere it must "
                             "be an empty folder or an earlier scratch copy")
    parser.add_argument("--keep-going", action="store_true", help="report every survivor, do not stop at the first")
    args = parser.parse_args()

    lists = args.list or sorted((ROOT / "Tests" / "Mutants").glob("*.mutants"))
    mutants = [m for path in lists for m in parse(path)]
    names = [m.name for m in mutants]
    if len(set(names)) != len(names):
        sys.exit(f"duplicate mutant names: {sorted({n for n in names if names.count(n) > 1})}")
    # Every entry's line must be found before anything is built, the entries --only leaves out included: a
    # change that moves another entry's line is caught by the run that tests the change.
    originals = {}
    for mutant in mutants:
        text = originals.setdefault(mutant.file, (ROOT / mutant.file).read_text())
        locate(text, mutant)
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            sys.exit(f"mutation gate: no mutant named {', '.join(unknown)} in the lists read")
        mutants = [m for m in mutants if m.name in args.only]
    if not mutants:
        sys.exit("no mutants to run")

    check_scratch(args.scratch)
    started = time.monotonic()
    scratch_copy(args.scratch)
    print(f"mutation gate: {len(mutants)} mutants from {len(lists)} lists; scratch copy {args.scratch}", flush=True)
    first = build(args.scratch)
    if first.returncode != 0:
        print(first.stdout[-4000:], first.stderr[-4000:], sep="\n")
        sys.exit("mutation gate: the unmutated copy does not build")

    for pattern in dict.fromkeys(m.filter for m in mutants):
        result, count, output = run_tests(args.scratch, pattern, 600)
        if result != "passed" or count == 0:
            # The failing tests' own lines, so that a flaky baseline names its test in CI's log.
            print("\n".join(line for line in output.splitlines() if "\u2718" in line)[-6000:], flush=True)
            sys.exit(f"mutation gate: the filter {pattern!r} {result} on the unmutated copy with {count} tests run "
                     f"(it must pass and run at least one test)")
    print(f"mutation gate: baseline filters pass ({time.monotonic() - started:.0f} s)", flush=True)

    survivors, errors = [], []
    for index, mutant in enumerate(mutants, 1):
        path = args.scratch / mutant.file
        original = path.read_text()
        lines = original.split("\n")
        at = locate(original, mutant)
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines[at] = indent + mutant.mutant
        path.write_text("\n".join(lines))
        t0 = time.monotonic()
        try:
            built = build(args.scratch)
            if built.returncode != 0:
                errors.append(mutant)
                verdict = "DOES NOT COMPILE (fix the list)"
                print(built.stdout[-2000:], built.stderr[-2000:], sep="\n")
            else:
                built_after = time.monotonic() - t0
                result, count, _ = run_tests(args.scratch, mutant.filter, mutant.timeout, first_issue_ends=True)
                verdict = {"failed": "killed", "timeout": "killed (time limit)", "passed": "SURVIVED"}[result]
                if result == "passed":
                    survivors.append(mutant)
        finally:
            path.write_text(original)
        took = time.monotonic() - t0
        split = f"; build {built_after:.0f} s" if built.returncode == 0 else ""
        print(f"[{index}/{len(mutants)}] {mutant.name}: {verdict} ({took:.0f} s{split})", flush=True)
        if (survivors or errors) and not args.keep_going:
            break

    build(args.scratch)  # leave the copy built unmutated, so the next run starts incremental
    elapsed = time.monotonic() - started
    for mutant in survivors:
        print(f"SURVIVED: {mutant.name} ({mutant.source}) — {mutant.file}: {mutant.line!r} → {mutant.mutant!r}; "
              f"no test in {mutant.filter!r} failed")
    for mutant in errors:
        print(f"LIST ERROR: {mutant.name} ({mutant.source}) does not compile")
    killed = len(mutants) - len(survivors) - len(errors) if args.keep_going or not (survivors or errors) else None
    if killed is not None:
        print(f"mutation gate: {killed} of {len(mutants)} mutants killed in {elapsed:.0f} s")
    return 1 if survivors or errors else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Interrupted as reason:
        sys.exit(f"mutation gate: interrupted ({reason}); the scratch copy was restored, nothing was judged")
