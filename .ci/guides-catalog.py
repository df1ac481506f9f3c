#!/usr/bin/env python3
"""Writes a DocC catalog of the guides in Docs/ (one article per guide), for the combined documentation site.

Docs/*.md stay the one source: this copies them into a catalog whose root page lists them, and rewrites what
DocC reads differently from GitHub: a link to another guide (`Tags.md#one-tag`) becomes a DocC link
(`doc:Tags#one-tag`), an image is referenced by its resource name, and a link to a file outside Docs/ (which
the site does not serve) keeps its text and shows the path in code.

usage: guides-catalog.py OUTPUT.docc
"""
import pathlib
import re
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "Docs"
# A Markdown link or image: [text](target), with no nested brackets in the text.
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def anchors(guide: str) -> dict[str, str]:
    """The guide's headings, from GitHub's anchor for each (lower case) to DocC's (case kept)."""
    found = {}
    for line in (DOCS / f"{guide}.md").read_text().splitlines():
        heading = re.match(r"^#{2,6} (.+)$", line)
        if heading:
            kept = re.sub(r"[^\w\- ]", "", heading.group(1)).strip()
            github = kept.lower().replace(" ", "-")
            found.setdefault(github, re.sub(r"\s+", "-", kept))
    return found


def rewrite(guide: str, text: str, guides: set[str], images: set[str]) -> str:
    def replace(match: re.Match) -> str:
        bang, label, target = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return match.group(0)  # a web address: as it is
        path, _, fragment = target.partition("#")
        name = pathlib.PurePosixPath(path).name if path else f"{guide}.md"
        if bang and name in images:
            return f"![{label}]({pathlib.PurePosixPath(name).stem})"
        if name.endswith(".md") and name[:-3] in guides and not path.startswith(".."):
            anchor = anchors(name[:-3]).get(fragment.lower(), fragment) if fragment else ""
            return f"[{label}](doc:{name[:-3]}{'#' + anchor if anchor else ''})"
        return f"{label} (`{path}`)"

    return LINK.sub(replace, text)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    output = pathlib.Path(sys.argv[1])
    shutil.rmtree(output, ignore_errors=True)
    (output / "Resources").mkdir(parents=True)
    guides = sorted(path.stem for path in DOCS.glob("*.md"))
    images = {path.name for path in DOCS.glob("*.png")}
    for image in images:
        shutil.copy(DOCS / image, output / "Resources" / image)
    titles = {}
    for guide in guides:
        text = (DOCS / f"{guide}.md").read_text()
        first = text.splitlines()[0] if text else ""
        if not first.startswith("# "):
            print(f"guides-catalog: Docs/{guide}.md does not open with a '# Title' line", file=sys.stderr)
            return 1
        titles[guide] = first[2:].strip()
        (output / f"{guide}.md").write_text(rewrite(guide, text, set(guides), images))
    # The root page: what the site's landing page lists beside the modules.
    order = ["Overview"] + [guide for guide in guides if guide != "Overview"]
    listing = "\n".join(f"- <doc:{guide}>" for guide in order if guide in titles)
    (output / "Guides.md").write_text(
        "# Strata Guides\n\n"
        "@Metadata {\n    @TechnologyRoot\n}\n\n"
        "How Strata's tiers work, what they promise, and how they were measured: the guides of the repository's\n"
        "`Docs/` folder.\n\n"
        f"## Topics\n\n### Guides\n\n{listing}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
