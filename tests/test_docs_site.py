"""The built documentation site: it builds with ``mkdocs build --strict``, loads nothing from another host (no
Google Fonts, no CDN), and reads well at 1280 px: long code lines are not cut at the right edge, and the left
sidebar's title does not cover the navigation entries under it.

The site is built once for the module (a few seconds) and served from 127.0.0.1 to Debian's Chromium.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """One strict build of the site for every test here: (the finished process, the site's folder)."""
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    return result, site


@pytest.fixture(scope="module")
def site(build):
    result, folder = build
    if result.returncode != 0:
        pytest.fail("the site does not build (see test_site_builds_strict)")
    return folder


@pytest.fixture(scope="module")
def server(site):
    """The built site over HTTP on 127.0.0.1 (a page's scripts do not run from file:// as they do online)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def test_site_builds_strict(build):
    result, site = build
    assert result.returncode == 0, result.stderr[-4000:]
    assert (site / "reference" / "cli" / "index.html").read_text().count("td2048 train") > 1


# --- nothing from another host -------------------------------------------------------------------------------

REMOTE = r"""(?:https?:)?//[^\s"'()<>]+"""
# in CSS (and the CSS inside HTML and JS): url(...) and @import of another host's file
CSS_LOADS = re.compile(rf"""url\(\s*["']?({REMOTE})|@import\s+(?:url\()?\s*["']?({REMOTE})""", re.I)
# <link rel=...> values that make the browser fetch (or connect to) the address
LOADING_RELS = {"stylesheet", "preconnect", "dns-prefetch", "preload", "prefetch", "modulepreload", "icon",
                "shortcut", "apple-touch-icon", "manifest", "mask-icon"}
# the addresses in Material's own JavaScript, each fetched only on a condition that the built HTML must not meet
JS_CONDITIONAL = {
    "https://unpkg.com/mermaid@": ("Mermaid, for pages with a diagram", re.compile(r'class="[^"]*\bmermaid\b')),
    "https://unpkg.com/resize-observer-polyfill": ("a polyfill, in browsers without ResizeObserver", None),
    "https://api.github.com/": ("a GitHub repository's stars", re.compile(r'data-md-component="source"')),
    "https://${": ("a GitLab repository's stars", re.compile(r'data-md-component="source"')),
}
JS_URL_LITERAL = re.compile(r"""["'`](https?://[^"'`\s]*)""")


class _Loads(HTMLParser):
    """The remote addresses a page's tags make the browser load: scripts, stylesheets, images, frames, media."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        urls = [attrs.get(name) for name in ("src", "data", "poster")]
        urls += [part.split()[0] for part in (attrs.get("srcset") or "").split(",") if part.strip()]
        if tag == "link" and LOADING_RELS & set((attrs.get("rel") or "").lower().split()):
            urls.append(attrs.get("href"))
        if tag in ("image", "use"):  # SVG
            urls += [attrs.get("href"), attrs.get("xlink:href")]
        self.found += [url for url in urls if url and re.match(REMOTE, url.strip())]
        self.found += [m[0] or m[1] for m in CSS_LOADS.finditer(attrs.get("style") or "")]

    def handle_data(self, data):  # <style> blocks (and text, which holds no url(...) that loads)
        if self.lasttag == "style":
            self.found += [m[0] or m[1] for m in CSS_LOADS.finditer(data)]


def test_site_loads_nothing_from_other_hosts(site):
    """No page, stylesheet or script of the built site names another host's file to load: the site works
    offline and tells no third party who reads it (links to other sites, in the text, are fine)."""
    html = {path: path.read_text(errors="replace") for path in site.rglob("*.html")}
    assert len(html) > 20
    loads = []
    for path, text in html.items():
        parser = _Loads()
        parser.feed(text)
        loads += [f"{path.relative_to(site)}: {url}" for url in parser.found]
    for path in [*site.rglob("*.css"), *site.rglob("*.js")]:
        loads += [f"{path.relative_to(site)}: {m[0] or m[1]}" for m in CSS_LOADS.finditer(path.read_text())]
    assert not loads, "\n".join(loads[:20])

    everything = "\n".join(html.values())
    for path in site.rglob("*.js"):
        for url in JS_URL_LITERAL.findall(path.read_text()):
            known = next((prefix for prefix in JS_CONDITIONAL if url.startswith(prefix)), None)
            assert known, f"{path.relative_to(site)} may load {url}: when? (add it to JS_CONDITIONAL, or drop it)"
            what, condition = JS_CONDITIONAL[known]
            assert condition is None or not condition.search(everything), f"a page loads {what} from {url}"


def test_pages_request_nothing_from_other_hosts(page, server):
    """In Chromium every request of a few pages (fonts, scripts, images, search index) goes to the site's host."""
    requests: list[str] = []

    def record(request):
        requests.append(request.url)

    page.on("request", record)
    try:
        for path in ["", "reference/api/", "benchmarks/experiments/"]:
            page.goto(f"{server}/{path}", wait_until="networkidle")
    finally:
        page.remove_listener("request", record)
    host = urlsplit(server).netloc
    assert any(url.endswith(".css") for url in requests), requests
    others = [url for url in requests if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != host]
    assert not others, others


# --- long code lines and wide tables at 1280 px -----------------------------------------------------------

LONG_COMMAND = "--memory-limit 6GiB --seed 0 --out runs/2584"

CUT = """root => [...root.querySelectorAll('pre > code, .md-typeset__scrollwrap')].filter(e => {
    // wider than its box, and neither scrolling nor showing that it does (a shadow at the edge)
    if (e.scrollWidth <= e.clientWidth) return false;
    const style = getComputedStyle(e);
    return !['auto', 'scroll'].includes(style.overflowX) || !style.backgroundImage.includes('radial-gradient');
}).map(e => e.textContent.trim().slice(0, 60))"""


def test_long_command_lines_wrap(page, server):
    """The course lab's long ``td2048 train`` line wraps inside its block at 1280 px (it used to run off the
    right edge behind a scrollbar that one does not see) and breaks between words, never after a ``--``."""
    page.goto(f"{server}/tutorials/course-lab/")
    code = page.locator("pre > code", has_text=LONG_COMMAND).first
    width, scroll_width, lines = code.evaluate("""e => [e.clientWidth, e.scrollWidth,
        Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))]""")
    assert scroll_width <= width, f"the line runs {scroll_width - width} px past the block"
    assert lines > len(code.text_content().strip().splitlines()), "no line wrapped: is the line still long?"
    assert code.locator(".md-nowrap").count() > 5, "docs/hooks/code_wrap.py marked no word"
    split = code.evaluate("""e => [...e.querySelectorAll('.md-nowrap')]
        .filter(w => w.getClientRects().length > 1).map(w => w.textContent)""")
    assert not split, f"words split at a hyphen: {split}"
    assert code.evaluate("e => e.textContent").count("\n--") == 0  # the copied text is the line as written


@pytest.mark.parametrize("path", ["concepts/networks/", "benchmarks/experiments/"])
def test_wide_blocks_and_tables_show_they_scroll(page, server, path):
    """A text block (a diagram, program output) or a table wider than the page scrolls sideways and shows it,
    with a shadow at the edge that has more (scrollbars may be hidden until one scrolls)."""
    page.goto(f"{server}/{path}")
    article = page.locator("article")
    wide = article.evaluate("root => [...root.querySelectorAll('pre > code, .md-typeset__scrollwrap')]"
                            ".filter(e => e.scrollWidth > e.clientWidth).length")
    assert wide, f"nothing wide on {path}: pick another page"
    assert not article.evaluate(CUT)


TABLES = """root => [...root.querySelectorAll('.md-typeset__scrollwrap')].map(wrap => {
    // each table's section and first header, its width against its column, and its tallest cell in lines: the
    // cell's height less its padding over its line height (a cell is as tall as its row: the row's tallest)
    const headings = [...root.querySelectorAll('h2, h3')].filter(h => h.compareDocumentPosition(wrap) & 4);
    const section = headings.length ? headings[headings.length - 1].textContent.replace('\u00b6', '').trim() : '';
    const [lines, tallest] = [...wrap.querySelectorAll('th, td')].map(cell => {
        const style = getComputedStyle(cell);
        const height = cell.getBoundingClientRect().height - parseFloat(style.paddingTop)
            - parseFloat(style.paddingBottom);
        return [Math.round(height / parseFloat(style.lineHeight)), cell.textContent.trim().slice(0, 40)];
    }).reduce((a, b) => (b[0] > a[0] ? b : a));
    return {table: `${section}: ${wrap.querySelector('th').textContent.trim()}`, scroll: wrap.scrollWidth,
            column: wrap.clientWidth, lines, tallest};
})"""


def test_research_page_tables_fit_their_column(page, server):
    """Every table of the research page (research/perfect-play/) fits its column at 1280 px, so that none
    scrolls sideways and hides its last columns, and none has a cell over three lines tall."""
    page.goto(f"{server}/research/perfect-play/")
    tables = page.locator("article").evaluate(TABLES)
    assert len(tables) >= 10, tables
    wide = [f"{t['table']!r} {t['scroll']} px wide in {t['column']}" for t in tables if t["scroll"] > t["column"]]
    tall = [f"{t['table']!r} {t['lines']} lines ({t['tallest']!r})" for t in tables if t["lines"] > 3]
    assert not wide + tall, "\n".join(wide + tall)


# --- the left sidebar's title --------------------------------------------------------------------------------

COVERED = """title => {
    // the navigation entries in sight that the title (with its shadow) covers, even in part
    const box = title.getBoundingClientRect();
    const shadow = (getComputedStyle(title).boxShadow.match(/-?[\\d.]+px/g) || []).map(parseFloat);
    const reach = shadow.length >= 4 ? Math.abs(shadow[2]) + Math.abs(shadow[3]) : 0;
    const view = title.closest('.md-sidebar__scrollwrap').getBoundingClientRect();
    const nav = title.closest('.md-nav');
    return [...nav.querySelectorAll(':scope > .md-nav__list .md-nav__link')].filter(link => {
        const r = link.getBoundingClientRect();
        if (!link.offsetParent || r.bottom <= view.top || r.top >= view.bottom) return false;
        return r.top < box.bottom + reach && r.bottom > box.top - reach;
    }).map(link => link.textContent.trim());
}"""


@pytest.mark.parametrize(("path", "sidebar"), [("benchmarks/experiments/", "primary"), ("reference/api/", "secondary")])
def test_sidebar_title_covers_no_entry(page, server, path, sidebar):
    """On a page deep in the navigation (Material scrolls the sidebar to its entry), and wherever the sidebar
    is scrolled, no entry lies under the sidebar's title: the title used to stick on top of the list."""
    page.goto(f"{server}/{path}")
    page.wait_for_timeout(100)  # Material scrolls the sidebar to the page's entry once the page is up
    scroller = page.locator(f".md-sidebar--{sidebar} .md-sidebar__scrollwrap")
    title = page.locator(f".md-sidebar--{sidebar} .md-nav--{sidebar} > .md-nav__title").first
    assert title.is_visible()
    height = scroller.evaluate("e => e.scrollHeight - e.clientHeight")
    assert height > 100, f"the {sidebar} sidebar of {path} does not scroll: pick a deeper page"
    for top in [None, 0, 50, height // 2, height]:
        if top is not None:
            scroller.evaluate("(e, top) => { e.scrollTop = top; }", top)
        covered = title.evaluate(COVERED)
        assert not covered, f"{path}, sidebar scrolled to {scroller.evaluate('e => e.scrollTop')}: {covered}"
