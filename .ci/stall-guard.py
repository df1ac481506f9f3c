#!/usr/bin/env python3
"""Runs a test command and turns a stall into a failure with evidence, instead of a CI run killed at its limit.

Usage: .ci/stall-guard.py [--quiet-minutes N] -- COMMAND ARGS...

The command's output is passed through line by line. When it prints nothing for N minutes (default 20;
Swift Testing prints a line per test started and ended, and every test has a 10-minute time limit), the
guard prints, for each test process below it: its threads' backtraces (gdb, when installed), its timer and
epoll descriptors (a dispatch timer that fired but is no longer watched stops every `Task.sleep` and every
time limit in the process: seen once, Docs/Testing.md), and its TCP connections; then it kills the command's
process group and exits 124. Otherwise it exits with the command's status.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        for child in children.get(pid, []):
            found.append(child)
            queue.append(child)
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def tcp_table() -> dict[str, str]:
    """Socket inode → "local -> remote state" for loopback TCP."""
    table = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(name).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            table[inode] = f"{int(local.split(':')[1], 16)} -> {int(remote.split(':')[1], 16)} state {state}"
    return table


def describe(pid: int) -> None:
    print(f"--- stall-guard: process {pid}: {command_line(pid)[:200]}", flush=True)
    sockets = tcp_table()
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError as error:
        print(f"    (cannot read its descriptors: {error})")
        descriptors = []
    for fd in sorted(descriptors, key=int):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "timerfd" in target or "eventpoll" in target:
            info = open(f"/proc/{pid}/fdinfo/{fd}").read().strip().replace("\n", " | ")
            print(f"    fd {fd} {target}: {info}")
        elif target.startswith("socket:[") and target[8:-1] in sockets:
            print(f"    fd {fd} tcp {sockets[target[8:-1]]}")
    if shutil.which("gdb"):
        trace = subprocess.run(
            ["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
            capture_output=True, text=True, timeout=300)
        print(trace.stdout[-200_000:], flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiet-minutes", type=float, default=20)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    arguments = parser.parse_args()
    command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
    if not command:
        parser.error("no command")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    last_output = [time.monotonic()]

    def pump() -> None:
        for line in iter(process.stdout.readline, b""):
            last_output[0] = time.monotonic()
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    quiet = arguments.quiet_minutes * 60
    while process.poll() is None:
        time.sleep(5)
        if time.monotonic() - last_output[0] < quiet:
            continue
        print(f"\nstall-guard: no output for {arguments.quiet_minutes:g} minutes from {' '.join(command)}", flush=True)
        for pid in [process.pid] + descendants(process.pid):
            if command_line(pid).split(" ")[0].endswith(".xctest"):
                describe(pid)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return 124
    reader.join(timeout=10)
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
