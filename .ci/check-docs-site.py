#!/usr/bin/env python3
"""Checks the combined documentation site that .ci/build-docs.sh writes, served from its root over HTTP.

What a reader's browser would fetch first, checked without a browser:
- `/` sends the reader to the landing page, and the landing page lists every module and the guides;
- every page of every module and guide is served at its own route (`/documentation/…/`), with the scripts
  and style sheets its HTML asks for;
- every link between pages (the `references` of each page's data) names a page the site has, and the
  navigator's index (the sidebar) is served.
With `--screenshot`, it also takes screenshots of the landing page and one symbol page with a headless
Chromium, when one is installed (none is on the CI machines; the option is for a person checking by eye).

usage: check-docs-site.py [--screenshot] [SITE]   (SITE defaults to .build/docs/site/Strata.doccarchive)
"""
import functools
import html.parser
import http.server
import json
import pathlib
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = sorted(path.stem for path in (ROOT / "Sources").glob("*/*.docc"))


class Assets(html.parser.HTMLParser):
    """The scripts and style sheets a page's HTML asks for."""

    def __init__(self):
        super().__init__()
        self.paths = []

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "script" and attributes.get("src"):
            self.paths.append(attributes["src"])
        if tag == "link" and attributes.get("rel") == "stylesheet" and attributes.get("href"):
            self.paths.append(attributes["href"])


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


def fetch(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def main():
    arguments = [argument for argument in sys.argv[1:] if argument != "--screenshot"]
    site = pathlib.Path(arguments[0] if arguments else ROOT / ".build/docs/site/Strata.doccarchive")
    if not (site / "data/documentation.json").is_file():
        print(f"check-docs-site: no combined site at {site} (run .ci/build-docs.sh)", file=sys.stderr)
        return 1
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    problems = []

    status, body = fetch(base, "/")
    if status != 200 or b'url=documentation/' not in body:
        problems.append(f"/ does not send the reader to the landing page (HTTP {status})")

    # The navigator (the sidebar of every page) reads the index of all the archives' pages.
    status, body = fetch(base, "/index/index.json")
    if status != 200 or not json.loads(body or b"{}").get("interfaceLanguages"):
        problems.append(f"/index/index.json: no navigator index (HTTP {status})")

    landing = json.loads((site / "data/documentation.json").read_text())
    listed = {identifier.split("/")[2] for section in landing.get("topicSections", [])
              for identifier in section.get("identifiers", [])}
    for bundle in [f"org.strata.{module}" for module in MODULES] + ["org.strata.Guides"]:
        if bundle not in listed:
            problems.append(f"the landing page does not list {bundle}")

    pages = sorted(site.glob("data/documentation/**/*.json")) + [site / "data/documentation.json"]
    known = {"/" + str(page.relative_to(site / "data").with_suffix("")).lower() for page in pages}
    checked_assets = set()
    for page in pages:
        route = "/" + str(page.relative_to(site / "data").with_suffix("")) + "/"
        status, body = fetch(base, route)
        if status != 200:
            problems.append(f"{route}: HTTP {status}")
            continue
        parser = Assets()
        parser.feed(body.decode("utf-8", "replace"))
        if not parser.paths:
            problems.append(f"{route}: the page asks for no scripts (not a DocC page)")
        for asset in parser.paths:
            if asset in checked_assets:
                continue
            checked_assets.add(asset)
            if fetch(base, asset if asset.startswith("/") else route + asset)[0] != 200:
                problems.append(f"{route}: asks for {asset}, which the site does not serve")
        data = json.loads(page.read_text())
        for reference in data.get("references", {}).values():
            url = reference.get("url", "")
            if reference.get("type") == "topic" and url.startswith("/documentation"):
                target = url.split("#")[0].rstrip("/").lower()
                if target not in known:
                    problems.append(f"{route}: links to {url}, which the site does not have")
    server.shutdown()

    if "--screenshot" in sys.argv[1:]:
        screenshot(site)
    for problem in problems[:50]:
        print(f"check-docs-site: {problem}", file=sys.stderr)
    if problems:
        print(f"check-docs-site: {len(problems)} problems in {len(pages)} pages", file=sys.stderr)
        return 1
    print(f"check-docs-site: {len(pages)} pages, {len(checked_assets)} assets, every link resolves")
    return 0


def screenshot(site):
    browser = next((shutil.which(name) for name in ["chromium", "chromium-browser", "google-chrome"]
                    if shutil.which(name)), None)
    if browser is None:
        print("check-docs-site: no headless Chromium here; screenshots skipped")
        return
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    output = site.parent / "screenshots"
    output.mkdir(exist_ok=True)
    for name, route in [("landing", "/documentation/"), ("symbol", "/documentation/memorycache/memorycache/")]:
        # The pages render in script: the virtual time budget lets it run before the picture is taken.
        subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--window-size=1280,900",
                        "--virtual-time-budget=20000", f"--screenshot={output / (name + '.png')}", base + route],
                       check=False, timeout=120, stderr=subprocess.DEVNULL)
        print(f"check-docs-site: {output / (name + '.png')}")
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
