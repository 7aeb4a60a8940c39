"""The rendered book, checked in a real headless browser (Debian's /usr/bin/chromium).

What a reader sees is not what Sphinx wrote: the hex views, the graphviz diagrams and the
ipywidgets only count if they are actually on screen. This test serves the BUILT book
(_build/html) on 127.0.0.1, opens every page in chromium driven by Playwright (using the
system chromium, never a downloaded one), and checks:

  * chapter 01: an element with class ``pymq-hexview``, non-empty and with a visible size;
  * chapter 00: a graphviz diagram (an ``svg`` with ``g.node`` elements, inline or as an
    ``<img>`` of an .svg file) that the browser loaded and laid out;
  * every page carrying saved widget state: each widget placeholder was replaced by widgets
    created at runtime by the vendored @jupyter-widgets/html-manager (``.jupyter-widgets``
    elements with a non-zero size), and at least one such page exists;
  * no page raised a JavaScript error, and no request left 127.0.0.1 (non-local requests
    are aborted and reported);
  * no page is wider than the viewport: the page never scrolls sideways, the article's content
    fits the article, and every notebook cell and hex-view field table ends within it (what
    cannot wrap scrolls inside its own box; book/_theme/pymq-book.css).

A screenshot of each checked page is saved under _build/screenshots/ for humans.

`make test` rebuilds the book first when any of its inputs changed (see the Makefile);
run on its own, this test builds it only if _build/html was never built.
"""
from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

if not sys.platform.startswith("linux"):
    pytest.skip("the browser test drives Debian's /usr/bin/chromium: Linux only",
                allow_module_level=True)

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CH00 = "notebooks/00_tour.html"
CH01 = "notebooks/01_anatomy_of_a_message.html"
LOCAL_HOSTS = {"127.0.0.1"}
LOCAL_SCHEMES = {"data", "blob", "about"}
CHROMIUM_ARGS = [
    "--no-sandbox",  # we run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        pass


@pytest.fixture(scope="module")
def site():
    """Base URL of _build/html served on 127.0.0.1 (building the book if it never was)."""
    if not (HTML / ".pymq-built").is_file():
        subprocess.run(["make", "-C", str(ROOT), "build-book"], check=True)
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser_context():
    """A fresh chromium profile, with every request recorded and non-local ones aborted."""
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} not found: run `make setup-browser` (installs Debian's chromium)")
    nonlocal_requests: list[str] = []

    def route(r):
        url = urlsplit(r.request.url)
        if url.scheme in LOCAL_SCHEMES or url.hostname in LOCAL_HOSTS:
            r.continue_()
        else:
            nonlocal_requests.append(r.request.url)
            r.abort()

    with tempfile.TemporaryDirectory(prefix="pymq-chromium-") as profile, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
            service_workers="block",
        )
        ctx.route("**/*", route)
        ctx.nonlocal_requests = nonlocal_requests
        try:
            yield ctx
        finally:
            ctx.close()


def _pages() -> list[str]:
    pages = [p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
             if not p.relative_to(HTML).parts[0].startswith("_")]
    return sorted(pages)


class Page:
    """One loaded page plus what went wrong while loading it."""

    def __init__(self, ctx, base: str, path: str):
        self.path = path
        self.page = ctx.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.goto(base + path, wait_until="load")

    def screenshot(self, element=None, what: str = "") -> Path:
        """Full page as <page>.png; with `element`, just that element as <page>__<what>.png."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        stem = self.path.replace("/", "__").removesuffix(".html")
        if element is None:
            out = SHOTS / f"{stem}.png"
            self.page.screenshot(path=str(out), full_page=True)
        else:
            out = SHOTS / f"{stem}__{what}.png"
            element.screenshot(path=str(out))
        return out


def _box(locator) -> dict:
    box = locator.bounding_box()
    return box or {"width": 0, "height": 0}


def test_pages_are_offline_and_error_free(site, browser_context):
    paths = _pages()
    assert CH00 in paths and CH01 in paths, f"chapter pages missing from {HTML}: {paths}"
    for path in paths:
        page = Page(browser_context, site, path)
        page.page.wait_for_load_state("networkidle")
        assert not page.errors, f"{path}: JavaScript errors: {page.errors}"
        page.page.close()
    assert not browser_context.nonlocal_requests, (
        f"requests to non-local hosts (aborted): {sorted(set(browser_context.nonlocal_requests))}")


def test_chapter01_hexview_is_rendered(site, browser_context):
    page = Page(browser_context, site, CH01)
    hexviews = page.page.locator(".pymq-hexview")
    assert hexviews.count() > 0, f"{CH01}: no element with class pymq-hexview"
    first = hexviews.first
    first.wait_for(state="visible", timeout=10_000)
    assert first.inner_text().strip(), f"{CH01}: the first .pymq-hexview is empty"
    box = _box(first)
    assert box["width"] > 0 and box["height"] > 0, f"{CH01}: .pymq-hexview has no size: {box}"
    page.screenshot()
    page.screenshot(first, "hexview")
    assert not page.errors, page.errors


def test_chapter00_graphviz_diagram_is_rendered(site, browser_context):
    page = Page(browser_context, site, CH00)
    pg = page.page
    # myst-nb writes image/svg+xml outputs to _images/*.svg and shows them with <img>;
    # an HTML output can also inline the <svg>. Accept both, but check the browser
    # loaded and laid out a real graphviz drawing.
    inline = pg.locator("article svg:has(g.node)")
    found = []
    for i in range(inline.count()):
        box = _box(inline.nth(i))
        if box["width"] > 0 and box["height"] > 0:
            found.append(f"inline svg #{i} ({box['width']:.0f}x{box['height']:.0f})")
            if len(found) == 1:
                page.screenshot(inline.nth(i), "graphviz")
    imgs = pg.locator("article img[src$='.svg']")
    for i in range(imgs.count()):
        img = imgs.nth(i)
        img.scroll_into_view_if_needed()
        ok = img.evaluate(
            """async (el) => {
                   if (!el.complete) await new Promise(r => el.addEventListener('load', r, {once: true}));
                   if (el.naturalWidth === 0) return 0;
                   const text = await (await fetch(el.src)).text();
                   const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
                   return doc.querySelectorAll('svg g.node').length;
               }""")
        box = _box(img)
        if ok and box["width"] > 0 and box["height"] > 0:
            found.append(f"<img> {img.get_attribute('src')} with {ok} g.node")
            if len(found) == 1:
                page.screenshot(img, "graphviz")
    page.screenshot()
    assert found, f"{CH00}: no rendered graphviz diagram (svg with g.node) on the page"
    assert not page.errors, page.errors


def test_widgets_are_rendered_by_the_vendored_manager(site, browser_context):
    with_state = [p for p in _pages()
                  if "application/vnd.jupyter.widget-state+json"
                  in (HTML / p).read_text(encoding="utf-8")]
    assert with_state, "no page of the book carries ipywidgets state (expected one in ch. 00 or 01)"
    for path in with_state:
        html = (HTML / path).read_text(encoding="utf-8")
        assert "_static/pymq-widgets/embed-amd.js" in html, f"{path}: widget JS is not the vendored one"
        page = Page(browser_context, site, path)
        pg = page.page
        views = pg.locator('script[type="application/vnd.jupyter.widget-view+json"]')
        n_views = views.count()
        assert n_views > 0, f"{path}: widget state but no widget view"
        # html-manager replaces each view <script> by a rendered widget in the same place.
        try:
            pg.wait_for_function(
                """n => document.querySelectorAll('.jupyter-widgets:not(script)').length >= n
                       && [...document.querySelectorAll('.jupyter-widgets')]
                            .every(e => e.getBoundingClientRect().height > 0)""",
                arg=n_views, timeout=20_000)
        except PlaywrightTimeoutError:
            page.screenshot()
            pytest.fail(f"{path}: {n_views} widget view(s) not rendered by the html-manager "
                        f"within 20 s (JS errors: {page.errors}); screenshot in {SHOTS}")
        widgets = pg.locator(".jupyter-widgets")
        box = _box(widgets.first)
        assert box["width"] > 0 and box["height"] > 0, f"{path}: widget has no size: {box}"
        assert pg.locator("[class*='widget-']").count() > 0, f"{path}: no widget-* element"
        page.screenshot()
        page.screenshot(widgets.first, "widget")
        assert not page.errors, f"{path}: JavaScript errors: {page.errors}"


#: JavaScript: what sticks out of the viewport or the article column (empty list = fine).
_WIDTH_PROBLEMS = """() => {
    const vw = document.documentElement.clientWidth;
    const out = [];
    const doc = document.documentElement.scrollWidth;
    if (doc > vw + 1) out.push(`the page scrolls sideways: ${doc}px wide in a ${vw}px viewport`);
    const article = document.querySelector('article.bd-article') || document.querySelector('article');
    if (!article) return out;
    const a = article.getBoundingClientRect();
    if (a.right > vw + 1) out.push(`the article ends at ${Math.round(a.right)}px, past the viewport (${vw}px)`);
    if (article.scrollWidth > article.clientWidth + 1)
        out.push(`the article's content is ${article.scrollWidth}px wide in a ${article.clientWidth}px article`);
    const check = (selector, what) => {
        document.querySelectorAll(selector).forEach((el, i) => {
            const r = el.getBoundingClientRect();
            if (r.width > 0 && r.right > a.right + 1)
                out.push(`${what} #${i} ends at ${Math.round(r.right)}px, past the article (${Math.round(a.right)}px)`);
        });
    };
    check('div.cell', 'notebook cell');
    check('table.pymq-fields', 'field table');
    check('article table', 'table');
    return out;
}"""


def test_no_page_is_wider_than_the_viewport(site, browser_context):
    problems = {}
    for path in _pages():
        page = Page(browser_context, site, path)
        page.page.wait_for_load_state("networkidle")
        found = page.page.evaluate(_WIDTH_PROBLEMS)
        page.page.set_viewport_size({"width": 1024, "height": 900})  # a laptop: both sidebars still shown
        found += [f"at 1024px: {p}" for p in page.page.evaluate(_WIDTH_PROBLEMS)]
        if found:
            page.screenshot()
            problems[path] = found
        page.page.close()
    assert not problems, "pages wider than the viewport (screenshots in _build/screenshots/):\n" + "\n".join(
        f"{path}: {p}" for path, found in problems.items() for p in found)
