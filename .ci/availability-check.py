#!/usr/bin/env python3
"""Apple availability check: no API newer than the package's minimums outside `if #available`/`@available`,
no platform-restricted API where a platform without it compiles the line, no glibc-only name where Darwin
compiles it.

Linux's standard library and Foundation carry no Apple availability, so neither the Linux build nor the Darwin
type-check (.ci/darwin-typecheck.sh) can see these; this script reads the sources against the table below.
Which lines a platform compiles is worked out from `#if os(...)`/`canImport(...)` conditions (an unknown
condition counts as "maybe", so the line is checked).

The scan reads code, not lines: comments and string literals are blanked first (interpolations stay code), so a
pattern matches across line breaks (`String(` and `validating:` on two lines); an initializer is found in every
spelling (`T(`, `T.init(`, an unapplied `T.init(validating:as:)`, the implicit member `.init(`, `Self(` inside
the type or an extension of it) and through any `typealias` chain to a listed type; a guard covers exactly the
body of its `if/while #available` (not an `else` on the same line), the rest of the scope after a
`guard #available … else { }`, and the one declaration an `@available` attribute is written on (its body, or
up to the end of the declaration when it has none). .ci/availability-fixtures/ holds evasions this must flag:
`--fixtures` checks that each file there is flagged (CI runs both).

What it cannot see: types (a value of type `String.Type` stored in a variable and called, a listed API reached
through a generic parameter or a protocol requirement), and macros. The glibc re-export limitation of the
Darwin type-check (Docs/Platforms.md) is covered here only for `stat.st_size`/`st_mode` handed on unconverted.

Usage: .ci/availability-check.py [SOURCES_DIR]    .ci/availability-check.py --fixtures
"""
import bisect
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
# `{Name}` stands for the listed type and every typealias that leads to it.
    (r"\b{Atomic}\s*[<(]|\b{Atomic}\s*\.\s*init\b", "Synchronization.Atomic", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/atomic"),
    (r"\b{Mutex}\s*[<(]|\b{Mutex}\s*\.\s*init\b", "Synchronization.Mutex", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/mutex"),
    (r"\b{WordPair}\b", "Synchronization.WordPair", APPLE_15,
     "https://developer.apple.com/documentation/synchronization/wordpair"),
    (r"\b{Int128}\b|\b{UInt128}\b", "Int128/UInt128", APPLE_15,
     "https://developer.apple.com/documentation/swift/int128"),
    (r"\bwithTaskExecutorPreference\b|\b{TaskExecutor}\b", "task executors", APPLE_15,
     "https://developer.apple.com/documentation/swift/taskexecutor"),
    (r"\bwith(?:Throwing)?DiscardingTaskGroup\b", "discarding task groups", APPLE_14,
     "https://developer.apple.com/documentation/swift/withdiscardingtaskgroup(returning:isolation:body:)"),
    (r"@Observable\b|\bimport\s+Observation\b", "Observation", APPLE_14,
     "https://developer.apple.com/documentation/observation"),
    (r"\b{InlineArray}\b", "InlineArray", APPLE_26, "https://developer.apple.com/documentation/swift/inlinearray"),
    (r"\b{UTF8Span}\b", "UTF8Span", APPLE_26, "https://developer.apple.com/documentation/swift/utf8span"),
    (r"\bTask\.immediate\b|\bTask\s*\(\s*name\s*:", "Task.immediate / named tasks", APPLE_26,
     "https://developer.apple.com/documentation/swift/task/immediate(name:priority:executorpreference:operation:)"),
]

TYPES = ("String", "Atomic", "Mutex", "WordPair", "Int128", "UInt128", "TaskExecutor", "InlineArray", "UTF8Span")

# Newer initializers of older types: (type, first argument label, name, first OS versions, source).
INITIALIZERS = [
    ("String", "validating", "String(validating:as:)", APPLE_15,
     "https://developer.apple.com/documentation/swift/string/init(validating:as:)-84qr9"),
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
            if arg in ("Darwin", "CryptoKit", "Security", "Network", "SwiftUI", "os", "ObjectiveC"):
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



# MARK: - Source text (comments and string literals blanked; interpolations kept as code)

INTERESTING_IN_CODE = re.compile(r'[/"#()]')
INTERESTING_IN_STRING = re.compile(r'[\\"\n]')


def clean(text):
    """`text` with comments and string-literal contents replaced by spaces (newlines kept, so offsets and line
    numbers stay), and string interpolations `\\(...)` kept as code, since code runs there too."""
    out = list(text)
    n = len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    def code(i, closing):
        """Scans code from i; returns the index after the `)` that closes an interpolation (closing=True)."""
        depth = 0
        while i < n:
            c = text[i]
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                blank(i, end)
                i = end
            elif text.startswith("/*", i):
                level, j = 1, i + 2
                while j < n and level:
                    if text.startswith("/*", j):
                        level, j = level + 1, j + 2
                    elif text.startswith("*/", j):
                        level, j = level - 1, j + 2
                    else:
                        j += 1
                blank(i, j)
                i = j
            elif c == '"' or (c == "#" and re.match(r'#+"', text[i:i + 64])):
                i = string(i)
            elif c == "(":
                depth += 1
                i += 1
            elif c == ")":
                if closing and depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                found = INTERESTING_IN_CODE.search(text, i + 1)
                i = found.start() if found else n
        return i

    def string(i):
        hashes = len(re.match(r"#*", text[i:]).group(0))
        j = i + hashes
        multi = text.startswith('"""', j)
        quote = '"""' if multi else '"'
        j += len(quote)
        terminator = quote + "#" * hashes
        escape = "\\" + "#" * hashes
        start = j
        while j < n:
            if text.startswith(escape, j):
                k = j + len(escape)
                if k < n and text[k] == "(":
                    blank(start, j)
                    j = code(k + 1, True)
                    start = j
                    continue
                j = k + 1
                continue
            if text.startswith(terminator, j):
                blank(start, j)
                return j + len(terminator)
            if text[j] == "\n" and not multi:
                break
            found = INTERESTING_IN_STRING.search(text, j + 1)
            j = found.start() if found else n
        blank(start, j)
        return j

    code(0, False)
    return "".join(out)


TOKEN = re.compile(r"\n|[A-Za-z_]\w*|[#@][A-Za-z_]\w*|\d[\w.]*|->|==|!=|<=|>=|&&|\|\||[^\s\w]")
# A newline at nesting depth 0 followed by one of these ends a declaration (an `@available` attribute's reach).
STATEMENT_START = {
    "func", "var", "let", "struct", "class", "enum", "actor", "extension", "init", "subscript", "typealias",
    "protocol", "case", "deinit", "static", "public", "private", "fileprivate", "internal", "package", "open",
    "final", "override", "mutating", "nonisolated", "convenience", "required", "lazy", "weak", "unowned",
    "indirect", "import", "if", "guard", "return", "for", "while", "switch", "do", "defer", "try", "await",
    "throw", "}", "#if", "#else", "#elseif", "#endif", "macro", "associatedtype", "operator", "precedencegroup",
}
INTRODUCER = {
    "func", "var", "let", "struct", "class", "enum", "actor", "extension", "init", "subscript", "typealias",
    "protocol", "case", "deinit", "macro",
}
TYPE_DECLARATION = {"struct", "class", "enum", "actor", "extension", "protocol"}


def tokens_of(cleaned):
    return [(m.group(0), m.start()) for m in TOKEN.finditer(cleaned)]


def scopes(tokens, length):
    """Guard intervals (start, end, versions) from `if/while/guard #available` and `@available`, and type
    intervals (start, end, type name) from struct/class/enum/actor/extension bodies, as text offsets."""
    count = len(tokens)
    match, stack = {}, []
    for index, (text, _) in enumerate(tokens):
        if text == "{":
            stack.append(index)
        elif text == "}" and stack:
            match[stack.pop()] = index
    enclosing, stack = [None] * count, []  # index of the innermost open `{` at each token
    for index, (text, _) in enumerate(tokens):
        enclosing[index] = stack[-1] if stack else None
        if text == "{":
            stack.append(index)
        elif text == "}" and stack:
            stack.pop()

    def end_of(open_index):
        close = match.get(open_index)
        return tokens[close][1] if close is not None else length

    def availability_arguments(index):
        """For `#available`/`@available` at `index`: (versions, index after its closing parenthesis)."""
        if index + 1 >= count or tokens[index + 1][0] != "(":
            return {}, index + 1
        depth, j = 0, index + 1
        while j < count:
            if tokens[j][0] == "(":
                depth += 1
            elif tokens[j][0] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = " ".join(t for t, _ in tokens[index + 2:j] if t != "\n")
        return parse_versions(inner), j + 1

    guards, types = [], []
    for index, (text, offset) in enumerate(tokens):
        if text in ("if", "while", "guard"):
            # The condition runs to the body's `{` (or `else` for guard) at nesting depth 0.
            depth, j, found = 0, index + 1, {}
            stop = "else" if text == "guard" else "{"
            while j < count:
                t = tokens[j][0]
                if t in ("(", "["):
                    depth += 1
                elif t in (")", "]"):
                    depth -= 1
                elif depth == 0 and (t == stop or t in ("}", ";")):
                    break
                elif t == "#available":
                    versions, _ = availability_arguments(j)
                    for p, v in versions.items():
                        found[p] = max(found.get(p, 0), v)
                j += 1
            if not found or j >= count or tokens[j][0] != stop:
                continue
            if text == "guard":
                # Guarded: the rest of the enclosing scope, after the else block.
                k = j + 1
                while k < count and tokens[k][0] != "{":
                    k += 1
                after = match.get(k)
                if after is None:
                    continue
                outer = enclosing[index]
                guards.append((tokens[after][1], end_of(outer) if outer is not None else length, found))
            else:
                guards.append((tokens[j][1], end_of(j), found))
        elif text == "@available":
            versions, j = availability_arguments(index)
            if not versions:
                continue
            # The declaration it applies to: past its introducer keyword, up to its body's closing brace, or,
            # without a body, up to the end of the declaration (a newline at depth 0 before a new statement).
            while j < count and tokens[j][0] not in INTRODUCER:
                j += 1
            depth, end = 0, length
            j += 1
            while j < count:
                t = tokens[j][0]
                if t in ("(", "["):
                    depth += 1
                elif t in (")", "]"):
                    depth -= 1
                elif t == "{" and depth == 0:
                    end = end_of(j)
                    break
                elif t in (";", "}") and depth <= 0:
                    end = tokens[j][1]
                    break
                elif t == "\n" and depth == 0 and j + 1 < count and tokens[j + 1][0] in STATEMENT_START:
                    end = tokens[j][1]
                    break
                j += 1
            guards.append((offset, end, versions))
        elif text in TYPE_DECLARATION and index + 1 < count and re.match(r"[A-Za-z_]", tokens[index + 1][0]):
            j = index + 1
            name = tokens[j][0]
            while j + 2 < count and tokens[j + 1][0] == "." and re.match(r"[A-Za-z_]", tokens[j + 2][0]):
                j += 2
                name = tokens[j][0]
            while j < count and tokens[j][0] not in ("{", ";", "}"):
                j += 1
            if j < count and tokens[j][0] == "{":
                types.append((tokens[j][1], end_of(j), name))
    return guards, types


# MARK: - Type aliases

def aliases(cleaned_files):
    """{listed type name: names that mean it}, following `typealias A = B` (chains too) across all files, since a
    module-level alias is visible in every file of the module."""
    pairs = []
    for cleaned in cleaned_files:
        for name, target in re.findall(r"\btypealias\s+(\w+)\s*(?:<[^=]*>)?\s*=\s*((?:\w+\s*\.\s*)*\w+)", cleaned):
            pairs.append((name, re.split(r"\s*\.\s*", target)[-1]))
    names = {t: {t} for t in TYPES}
    changed = True
    while changed:
        changed = False
        for alias, target in pairs:
            for t, known in names.items():
                if target in known and alias not in known:
                    known.add(alias)
                    changed = True
    return names


def expand(template, names):
    return re.sub(r"\{(\w+)\}", lambda m: "(?:" + "|".join(sorted(map(re.escape, names[m.group(1)]))) + ")",
                  template)


def initializer_calls(cleaned, tokens, api_type, label, names, types_at):
    """Offsets of calls of `api_type`'s `init(label:…)` in every spelling: `T(label:`, `T.init(label:`,
    `T.init(label:as:)` (a reference), `.init(label:` (implicit member), `Self(label:`/`self.init(label:`/
    `Self.init(label:` inside a declaration or extension of the type, with `T` any alias of the type."""
    found = []
    for m in re.finditer(r"\(\s*" + label + r"\s*:", cleaned):
        # The tokens before `(`, skipping newlines.
        before = cleaned[:m.start()].rstrip()
        words = re.findall(r"(?:[A-Za-z_]\w*|[^\s\w])", before[-200:])
        if not words:
            continue
        callee, context = words[-1], None
        if callee == "init":
            if len(words) < 2 or words[-2] != ".":
                continue  # `init(label:` declares, it does not call
            receiver = words[-3] if len(words) >= 3 else ""
            if not re.match(r"[A-Za-z_]", receiver) or receiver in ("return", "try", "await", "in", "else",
                                                                      "throw", "case", "where", "is", "as"):
                found.append(m.start())  # `.init(label:` as an implicit member of the contextual type
                continue
            callee = receiver
        if callee in names[api_type]:
            found.append(m.start())
        elif callee in ("Self", "self"):
            context = types_at(m.start())
            if context in names[api_type]:
                found.append(m.start())
    return found


# MARK: - The check

def line_of(starts, offset):
    return bisect.bisect_right(starts, offset)


def check(root, minimum):
    paths = []
    for folder, _, files in sorted(os.walk(root)):
        paths += [os.path.join(folder, name) for name in sorted(files) if name.endswith(".swift")]
    return check_files(paths, root, minimum)


def check_files(paths, root, minimum):
    failures = []
    sources = {path: open(path, encoding="utf-8").read() for path in paths}
    cleaned = {path: clean(text) for path, text in sources.items()}
    names = aliases(cleaned.values())
    newer = [(re.compile(expand(pattern, names)), api, versions, source) for pattern, api, versions, source in NEWER]
    for path in paths:
        text = cleaned[path]
        lines = sources[path].split("\n")
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        platforms = compiled_platforms(lines)
        tokens = tokens_of(text)
        guards, types = scopes(tokens, len(text))

        def types_at(offset):
            inside = [(start, name) for start, end, name in types if start < offset < end]
            return max(inside)[1] if inside else None

        def guarded(offset):
            result = {}
            for start, end, versions in guards:
                if start <= offset < end:
                    for p, v in versions.items():
                        result[p] = max(result.get(p, 0), v)
            return result

        # The CLI is a macOS and Linux tool (Docs/Platforms.md): it is not built for iOS, tvOS or watchOS.
        tool = os.path.relpath(path, root).split(os.sep)[0] == "strata"

        def where_at(offset):
            where = platforms[line_of(starts, offset) - 1]
            return where & {"macOS", "Linux"} if tool else where

        def newer_use(offset, api, versions, source):
            number = line_of(starts, offset)
            where, guard = where_at(offset), guarded(offset)
            for p in APPLE:
                if p in where and versions[p] > max(minimum[p], guard.get(p, minimum[p])):
                    failures.append(f"{path}:{number}: {api} needs {p} {versions[p]}, the package supports "
                                    f"{p} {minimum[p]}; guard it with #available/@available ({source})")

        for pattern, api, versions, source in newer:
            for m in pattern.finditer(text):
                newer_use(m.start(), api, versions, source)
        for api_type, label, api, versions, source in INITIALIZERS:
            for offset in initializer_calls(text, tokens, api_type, label, names, types_at):
                newer_use(offset, api, versions, source)
        for pattern, api, allowed, source in RESTRICTED:
            for m in re.finditer(pattern, text):
                number = line_of(starts, m.start())
                for p in sorted(where_at(m.start()) - allowed):
                    failures.append(f"{path}:{number}: {api} does not exist on {p}, which compiles this "
                                    f"line; put it under #if os(...) ({source})")
        for pattern, api in LINUX_ONLY:
            for m in re.finditer(pattern, text):
                number = line_of(starts, m.start())
                for p in sorted(where_at(m.start()) & set(APPLE)):
                    failures.append(f"{path}:{number}: {api} is glibc-only, but {p} compiles this line")
        for offset, field in stat_fields_used_as_is(text):
            number = line_of(starts, offset)
            for p in sorted(where_at(offset) & set(APPLE)):
                failures.append(f"{path}:{number}: stat.{field} flows into a typed place unconverted; its type "
                                f"differs between glibc and Darwin ({STAT_TYPES[field]}), and the Darwin "
                                f"type-check reads glibc's: convert it explicitly (Int(...), UInt32(...))")
    return failures


STAT_TYPES = {
    "st_size": "off_t: Int on glibc x86-64/arm64, Int64 on Darwin",
    "st_mode": "mode_t: UInt32 on glibc, UInt16 on Darwin",
}


def stat_fields_used_as_is(cleaned):
    """`x.st_size`/`x.st_mode` passed on as a value of its own (glibc) type: returned, given as an argument, or
    bound to a name with a type annotation; not when converted (`Int(x.st_size)`), compared, or masked."""
    found = []
    for m in re.finditer(r"\.\s*(st_size|st_mode)\b", cleaned):
        after = cleaned[m.end():m.end() + 40].lstrip()
        if re.match(r"(?:==|!=|<=|>=|<|>|&|\||\^|\+|-|\*|/|%)", after):
            continue  # an operand: the other side decides, and the Darwin type-check sees the mismatch there
        start = m.start()
        while start > 0 and (cleaned[start - 1].isalnum() or cleaned[start - 1] in "_.?!"):
            start -= 1
        before = cleaned[:start].rstrip()
        if re.search(r"(?:==|!=|<=|>=|<|>|&|\||\^|\+|-|\*|/|%)$", before):
            continue
        conversion = re.search(r"\b(Int|Int64|UInt64|Int32|UInt32|UInt16|off_t|mode_t|numericCast)\s*\($", before)
        if conversion:
            continue
        typed = re.search(r":\s*(\w+)\s*=$", before)
        if typed and typed.group(1) not in ("off_t", "mode_t"):
            found.append((m.start(), m.group(1)))
        elif re.search(r"(?:\breturn|[(,]|\w\s*:)$", before):
            found.append((m.start(), m.group(1)))
    return found


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    minimum = minimums("Package.swift")
    if sys.argv[1:] == ["--fixtures"]:
        fixtures()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else "Sources"
    failures = check(root, minimum)
    print(f"  minimums: " + ", ".join(f"{p} {minimum[p]}" for p in APPLE))
    print(f"  {len(NEWER) + len(INITIALIZERS)} newer APIs, {len(RESTRICTED)} platform-restricted APIs, {len(LINUX_ONLY)} glibc-only names")
    for failure in sorted(set(failures)):
        print(failure)
    if failures:
        sys.exit(f"availability check: {len(set(failures))} problem(s)")
    print("  availability check passed")


def fixtures():
    """Each file in .ci/availability-fixtures/ must be flagged, at every line marked `// FLAG`, and nowhere else."""
    folder = os.path.join(".ci", "availability-fixtures")
    minimum = minimums(os.path.join(folder, "minimums.txt"))  # fixed, so a raised package minimum keeps them red
    bad = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(folder, name)
        expected = {number for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1)
                    if line.rstrip().endswith("// FLAG")}
        flagged = set()
        for failure in check_files([path], os.path.dirname(path), minimum):
            flagged.add(int(failure.split(":")[1]))
        if not expected:
            print(f"  {name}: marks no line with // FLAG")
            bad += 1
        elif flagged != expected:
            missed, extra = sorted(expected - flagged), sorted(flagged - expected)
            print(f"  {name}: NOT as expected (missed lines {missed}, flagged unmarked lines {extra})")
            bad += 1
        else:
            print(f"  {name}: flagged as expected (lines {sorted(flagged)})")
    if bad:
        sys.exit(f"availability check fixtures: {bad} file(s) not flagged as expected; the checker regressed")
    print("  every availability fixture is flagged")


if __name__ == "__main__":
    main()
