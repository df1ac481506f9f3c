#!/usr/bin/env python3
"""Builds every Swift code block of README.md and Docs/ against the package (Docs/Testing.md, "Examples that compile").

Each ```swift block becomes one file of a scratch package that depends on the repository by path:
- a block of statements is compiled in the context it shows: inside an `async throws` function when it
  uses `await`, inside a synchronous `throws` function otherwise;
- a block of declarations (tests, suites, types) is compiled inside a `struct`, or at file level when it
  declares an `extension`;
- a block after `<!-- snippet: manifest -->` is a whole Package.swift: it is written into a scratch
  package beside a link named after the folder it names, and must resolve;
- a block after `<!-- snippet: darwin -->` uses an Apple-only module (SwiftUI): it must appear, line for
  line, in one of .ci/darwin-examples/*.swift, which .ci/darwin-typecheck.sh type-checks;
- a block after `<!-- snippet: skip -->` is deliberately partial and is not compiled.
The stand-ins for the placeholders the docs use (`data`, `url`, `SessionStore`, ...) are declared in
.ci/snippets/Prelude.swift. Exit status 0 when everything builds, 1 otherwise.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRATCH = ROOT / ".build" / "snippets"
FENCE = re.compile(r"^```swift\s*$")
MARKER = re.compile(r"<!--\s*snippet:\s*(\w+)\s*-->")
DECLARATION = re.compile(r"^(@\w+|(public |private |final )*(struct|class|enum|actor|extension|func|protocol)\b)")


def blocks(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    marker, i = None, 0
    while i < len(lines):
        found = MARKER.search(lines[i])
        if found:
            marker = found.group(1)
        if FENCE.match(lines[i]):
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, marker, body
            marker = None
        elif lines[i].strip() and not found:
            marker = None
        i += 1


def swift_file(name, origin, body):
    imports = [line for line in body if re.match(r"^(@testable )?import \w+", line)]
    code = [line for line in body if line not in imports]
    top_level = [line for line in code if line and not line[0].isspace() and not line.startswith(("//", "}"))]
    # A block with imports of its own is checked with those alone, so an example that forgets
    # `import Foundation` fails here as it would in a reader's file; a fragment without imports continues
    # an earlier example and gets the usual ones.
    if imports:
        header = [f"// {origin}"] + imports
    else:
        header = [f"// {origin}", "import CacheTesting", "import Foundation", "import Strata", "import Testing"]
    declarations = top_level and all(DECLARATION.match(line) for line in top_level)
    if declarations and any(line.startswith("extension") for line in top_level):
        return "\n".join(header + [""] + code) + "\n"
    if declarations:
        return "\n".join(header + ["", f"struct {name} {{"] + code + ["}"]) + "\n"
    effects = "async throws" if any("await " in line for line in code) else "throws"
    indented = ["    " + line if line else line for line in code]
    return "\n".join(header + ["", f"func {name}() {effects} {{"] + indented + ["}"]) + "\n"


def code_lines(text_lines):
    """The lines that carry code: no blank lines, comments or imports, white space trimmed."""
    kept = []
    for line in text_lines:
        line = line.strip()
        if line and not line.startswith("//") and not re.match(r"^(@testable )?import \w+", line):
            kept.append(line)
    return kept


def in_darwin_examples(body):
    wanted = code_lines(body)
    for example in sorted((ROOT / ".ci" / "darwin-examples").glob("*.swift")):
        have = code_lines(example.read_text(encoding="utf-8").splitlines())
        if any(have[i:i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1)):
            return True
    return False


def run(command, cwd):
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-6000:] + result.stderr[-6000:])
    return result.returncode == 0


def main():
    documents = [ROOT / "README.md"] + sorted((ROOT / "Docs").rglob("*.md"))
    shutil.rmtree(SCRATCH, ignore_errors=True)
    sources = SCRATCH / "package" / "Sources" / "Snippets"
    sources.mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "snippets" / "Prelude.swift", sources / "Prelude.swift")
    compiled, skipped, darwin, manifests, ok = 0, 0, 0, [], True
    for document in documents:
        for line, marker, body in blocks(document):
            origin = f"{document.relative_to(ROOT)}:{line}"
            if marker == "skip":
                skipped += 1
            elif marker == "darwin":
                if in_darwin_examples(body):
                    darwin += 1
                else:
                    print(f"check-snippets: the block at {origin} is not in .ci/darwin-examples", file=sys.stderr)
                    ok = False
            elif marker == "manifest":
                manifests.append((origin, "\n".join(body) + "\n"))
            else:
                name = f"snippet{compiled}"
                (sources / f"{name}.swift").write_text(swift_file(name, origin, body), encoding="utf-8")
                compiled += 1
    (SCRATCH / "package" / "Package.swift").write_text(
        "// swift-tools-version:6.0\n"
        "import PackageDescription\n\n"
        "let package = Package(\n"
        '    name: "Snippets",\n'
        "    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],\n"
        f'    dependencies: [.package(name: "Strata", path: "{ROOT}")],\n'
        "    targets: [\n"
        '        .target(name: "Snippets", dependencies: [\n'
        '            .product(name: "Strata", package: "Strata"),\n'
        '            .product(name: "CacheTesting", package: "Strata"),\n'
        "        ])\n"
        "    ]\n"
        ")\n",
        encoding="utf-8",
    )
    # No -warnings-as-errors: an example may leave a value unused; errors are what a reader would hit.
    ok = run(["swift", "build"], SCRATCH / "package") and ok
    for index, (origin, manifest) in enumerate(manifests):
        # The manifest names the dependency by a relative path; give it a folder of that name.
        app = SCRATCH / f"manifest{index}" / "app"
        app.mkdir(parents=True)
        (app / "Package.swift").write_text(manifest, encoding="utf-8")
        for match in re.finditer(r'path:\s*"(\.\./[^"]+)"', manifest):
            link = (app / match.group(1)).resolve()
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                os.symlink(ROOT, link)
        for target in re.finditer(r'\.(?:test)?[tT]arget\(name:\s*"(\w+)"', manifest):
            folder = "Tests" if target.group(0).startswith(".testTarget") else "Sources"
            (app / folder / target.group(1)).mkdir(parents=True, exist_ok=True)
            (app / folder / target.group(1) / "Empty.swift").write_text("", encoding="utf-8")
        if not run(["swift", "package", "describe"], app):
            print(f"check-snippets: the manifest at {origin} does not resolve", file=sys.stderr)
            ok = False
    print(f"check-snippets: {compiled} blocks compiled, {len(manifests)} manifests resolved, "
          f"{darwin} found in the Darwin type-check's examples, {skipped} partial blocks skipped: "
          f"{'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
