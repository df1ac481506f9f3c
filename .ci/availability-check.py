#!/usr/bin/env python3
"""Apple availability check: no API newer than the package's minimums outside `if #available`/`@available`,
no platform-restricted API where a platform without it compiles the line, no glibc-only name where Darwin
compiles it.

Linux's standard library and Foundation carry no Apple availability, so neither the Linux build nor the Darwin
type-check (.ci/darwin-typecheck.sh) can see these; this script reads the sources against the table below.
Which lines a platform compiles is worked out from `#if os(...)`/`canImport(...)` conditions (an unknown
condition counts as "maybe", so the line is checked). Usage: .ci/availability-check.py [SOURCES_DIR]
"""
import os
import re
import sys

APPLE = ("macOS", "iOS", "tvOS", "watchOS")
PLATFORMS = APPLE + ("Linux",)
APPLE_15 = {"macOS": 15, "iOS": 18, "tvOS": 18, "watchOS": 11}
APPLE_26 = {"macOS": 26, "iOS": 26, "tvOS": 26, "watchOS": 26}
APPLE_14 = {"macOS": 14, "iOS": 17, "tvOS": 17, "watchOS": 10}

# Newer APIs that matter: (pattern, name, first OS versions, source of the versions).
NEWER = [
    (r"\bString\s*\(\s*validating\s*:", "String(validating:as:)", APPLE_15,
     "https://developer.apple.com/documentation/swift/string/init(validating:as:)-84qr9"),
    (r"\bAtomic\s*[<(]", "Synchronization.Atomic", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/atomic"),
    (r"\bMutex\s*[<(]", "Synchronization.Mutex", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/mutex"),
    (r"\bWordPair\b", "Synchronization.WordPair", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/wordpair"),
    (r"\b(?:Int128|UInt128)\b", "Int128/UInt128", APPLE_15, "https://developer.apple.com/documentation/swift/int128"),
    (r"\bwithTaskExecutorPreference\b|\bTaskExecutor\b", "task executors", APPLE_15,
     "https://developer.apple.com/documentation/swift/taskexecutor"),
    (r"\bwith(?:Throwing)?DiscardingTaskGroup\b", "discarding task groups", APPLE_14,
     "https://developer.apple.com/documentation/swift/withdiscardingtaskgroup(returning:isolation:body:)"),
    (r"@Observable\b|\bimport\s+Observation\b", "Observation", APPLE_14,
     "https://developer.apple.com/documentation/observation"),
    (r"\bInlineArray\b", "InlineArray", APPLE_26, "https://developer.apple.com/documentation/swift/inlinearray"),
    (r"\bUTF8Span\b", "UTF8Span", APPLE_26, "https://developer.apple.com/documentation/swift/utf8span"),
    (r"\bTask\.immediate\b|\bTask\s*\(\s*name\s*:", "Task.immediate / named tasks", APPLE_26,
     "https://developer.apple.com/documentation/swift/task/immediate(name:priority:executorpreference:operation:)"),
]

# Platform-restricted APIs: (pattern, name, platforms that have it, source).
RESTRICTED = [
    (r"\bhomeDirectoryForCurrentUser\b", "FileManager.homeDirectoryForCurrentUser", {"macOS", "Linux"},
     "https://developer.apple.com/documentation/foundation/filemanager/homedirectoryforcurrentuser"),
    (r"\bhomeDirectory\s*\(\s*forUser\b", "FileManager.homeDirectory(forUser:)", {"macOS", "Linux"},
     "https://developer.apple.com/documentation/foundation/filemanager/homedirectory(foruser:)"),
    (r"\bProcess\s*\(\s*\)|\bProcess\.run\b", "Foundation.Process", {"macOS", "Linux"},
     "https://developer.apple.com/documentation/foundation/process"),
    (r"\bposix_spawnp?\s*\(|\bfork\s*\(\s*\)|\bexecve?p?\s*\(", "posix_spawn/fork/exec",
     {"macOS", "iOS", "Linux"}, "SDK usr/include/spawn.h: __WATCHOS_PROHIBITED __TVOS_PROHIBITED"),
]

# Names glibc has and Darwin does not (or names differently).
LINUX_ONLY = [
    (r"\bst_[amc]tim\b", "stat.st_mtim (Darwin: st_mtimespec)"),
    (r"\bPTHREAD_MUTEX_ADAPTIVE_NP\b", "PTHREAD_MUTEX_ADAPTIVE_NP"),
    (r"/proc/", "/proc"),
    (r"\b(?:pipe2|accept4|statx|getrandom|memfd_create|sync_file_range|posix_fadvise|fallocate)\s*\(", "glibc call"),
    (r"\b(?:O_DIRECT|O_TMPFILE|SOCK_CLOEXEC|EBADFD|ECOMM)\b", "glibc constant"),
    (r"(?<![\w.])environ\b", "environ (Darwin: _NSGetEnviron())"),
]


def minimums(package):
    text = open(package, encoding="utf-8").read()
    found = {name: int(v) for name, v in re.findall(r"\.(macOS|iOS|tvOS|watchOS)\(\.v(\d+)", text)}
    missing = set(APPLE) - set(found)
    if missing:
        sys.exit(f"Package.swift declares no minimum for {', '.join(sorted(missing))}")
    return found


# MARK: - Conditional compilation

def evaluate(condition, platform):
    """True, False or None (unknown) for a `#if` condition on `platform`."""
    apple = platform in APPLE

    def atom(match):
        kind, arg = match.group(1), match.group(2).strip()
        if kind == "os":
            return str(arg == platform)
        if kind == "canImport":
            if arg in ("Darwin", "CryptoKit", "Security", "SwiftUI", "os", "ObjectiveC"):
                return str(apple)
            if arg in ("Glibc", "Musl", "Android", "WinSDK", "COpenSSL"):
                return str(platform == "Linux" and arg in ("Glibc", "COpenSSL"))
            return "None"
        return "None"  # arch, compiler, swift, targetEnvironment: either way

    expression = re.sub(r"\b(os|canImport|arch|compiler|swift|targetEnvironment)\s*\(([^)]*)\)", atom, condition)
    expression = re.sub(r"\b(?!True\b|False\b|None\b)[A-Za-z_]\w*\b", "None", expression)
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression)
    try:
        return eval3(expression)
    except Exception:
        return None


def eval3(expression):
    # Three-valued logic on Python's None: `not None` is None, `None and False` is False, `None or True` is True.
    tokens = re.findall(r"\(|\)|and|or|not|True|False|None", expression)
    position = 0

    def parse_or():
        nonlocal position
        value = parse_and()
        while position < len(tokens) and tokens[position] == "or":
            position += 1
            right = parse_and()
            value = True if True in (value, right) else (None if None in (value, right) else False)
        return value

    def parse_and():
        nonlocal position
        value = parse_not()
        while position < len(tokens) and tokens[position] == "and":
            position += 1
            right = parse_not()
            value = False if False in (value, right) else (None if None in (value, right) else True)
        return value

    def parse_not():
        nonlocal position
        if tokens[position] == "not":
            position += 1
            value = parse_not()
            return None if value is None else not value
        if tokens[position] == "(":
            position += 1
            value = parse_or()
            position += 1
            return value
        token = tokens[position]
        position += 1
        return {"True": True, "False": False, "None": None}[token]

    return parse_or()


def compiled_platforms(lines):
    """For each line, the set of platforms that may compile it."""
    result, stack = [], []  # stack of per-platform dicts: {"active": bool?, "taken": bool?}
    for line in lines:
        stripped = line.strip()
        directive = re.match(r"#(if|elseif|else|endif)\b(.*)", stripped)
        if directive:
            kind, rest = directive.group(1), re.sub(r"//.*", "", directive.group(2)).strip()
            if kind == "if":
                frame = {}
                for p in PLATFORMS:
                    value = evaluate(rest, p)
                    frame[p] = {"active": value, "taken": value}
                stack.append(frame)
            elif kind in ("elseif", "else") and stack:
                for p, state in stack[-1].items():
                    value = True if kind == "else" else evaluate(rest, p)
                    taken = state["taken"]
                    if taken is True:
                        state["active"] = False
                    elif taken is None:
                        state["active"] = None if value is not False else False
                    else:
                        state["active"] = value
                    state["taken"] = True if True in (taken, value) else (None if None in (taken, value) else False)
            elif kind == "endif" and stack:
                stack.pop()
            result.append(set())
            continue
        result.append({p for p in PLATFORMS if all(frame[p]["active"] is not False for frame in stack)})
    return result


# MARK: - Availability scopes

def parse_versions(text):
    """`macOS 15, iOS 18.0, *` or `macOS, introduced: 15` or `iOS, unavailable` -> {platform: version}."""
    versions = {}
    for name, number in re.findall(r"\b(macOS|iOS|tvOS|watchOS)\s+(\d+)", text):
        versions[name] = int(number)
    long_form = re.match(r"\s*(macOS|iOS|tvOS|watchOS)\s*,\s*(.*)", text)
    if long_form:
        introduced = re.search(r"introduced:\s*(\d+)", long_form.group(2))
        if introduced:
            versions[long_form.group(1)] = int(introduced.group(1))
        if "unavailable" in long_form.group(2):
            versions[long_form.group(1)] = 10**6
    return versions


def strip_code(line):
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return re.sub(r"//.*", "", line)


def guarded_versions(lines):
    """For each line, the OS versions an enclosing `#available`/`@available` guarantees."""
    result, scopes, depth, pending = [], [], 0, []
    for line in lines:
        code = strip_code(line)
        active = {}
        for scope in scopes:
            for p, v in scope["versions"].items():
                active[p] = max(active.get(p, 0), v)
        attribute = re.search(r"@available\s*\(([^)]*)\)", code)
        if attribute:
            pending.append(parse_versions(attribute.group(1)))
        condition = re.search(r"\b(if|guard|while)\b[^{]*#available\s*\(([^)]*)\)", code)
        line_versions = dict(active)
        for versions in pending:
            for p, v in versions.items():
                line_versions[p] = max(line_versions.get(p, 0), v)
        if condition:
            versions = parse_versions(condition.group(2))
            for p, v in versions.items():
                line_versions[p] = max(line_versions.get(p, 0), v)
        result.append(line_versions)
        for character in code:
            if character == "{":
                depth += 1
                if condition and condition.group(1) in ("if", "while"):
                    scopes.append({"depth": depth, "versions": parse_versions(condition.group(2))})
                    condition = None
                elif pending:
                    merged = {}
                    for versions in pending:
                        merged.update(versions)
                    scopes.append({"depth": depth, "versions": merged})
                    pending = []
            elif character == "}":
                scopes = [s for s in scopes if s["depth"] < depth]
                depth -= 1
        if condition and condition.group(1) == "guard":
            # The rest of the enclosing scope is guarded.
            scopes.append({"depth": depth, "versions": parse_versions(condition.group(2))})
    return result


# MARK: - The check

def check(root, minimum):
    failures = []
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            lines = open(path, encoding="utf-8").read().split("\n")
            platforms = compiled_platforms(lines)
            guards = guarded_versions(lines)
            # The CLI is a macOS and Linux tool (Docs/Platforms.md): it is not built for iOS, tvOS or watchOS.
            tool = os.path.relpath(path, root).split(os.sep)[0] == "strata"
            for number, line in enumerate(lines, 1):
                code = strip_code(line)
                if not code.strip() or code.lstrip().startswith(("///", "*")):
                    continue
                where = platforms[number - 1]
                if tool:
                    where = where & {"macOS", "Linux"}
                for pattern, api, versions, source in NEWER:
                    if not re.search(pattern, code):
                        continue
                    for p in APPLE:
                        guarded = guards[number - 1].get(p, minimum[p])
                        if p in where and versions[p] > max(minimum[p], guarded):
                            failures.append(f"{path}:{number}: {api} needs {p} {versions[p]}, the package supports "
                                            f"{p} {minimum[p]}; guard it with #available/@available ({source})")
                for pattern, api, allowed, source in RESTRICTED:
                    if re.search(pattern, code):
                        for p in sorted(where - allowed):
                            failures.append(f"{path}:{number}: {api} does not exist on {p}, which compiles this "
                                            f"line; put it under #if os(...) ({source})")
                for pattern, api in LINUX_ONLY:
                    if re.search(pattern, code):
                        for p in sorted(where & set(APPLE)):
                            failures.append(f"{path}:{number}: {api} is glibc-only, but {p} compiles this line")
    return failures


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    root = sys.argv[1] if len(sys.argv) > 1 else "Sources"
    minimum = minimums("Package.swift")
    failures = check(root, minimum)
    print(f"  minimums: " + ", ".join(f"{p} {minimum[p]}" for p in APPLE))
    print(f"  {len(NEWER)} newer APIs, {len(RESTRICTED)} platform-restricted APIs, {len(LINUX_ONLY)} glibc-only names")
    for failure in sorted(set(failures)):
        print(failure)
    if failures:
        sys.exit(f"availability check: {len(set(failures))} problem(s)")
    print("  availability check passed")


if __name__ == "__main__":
    main()
