"""The browser fixtures, for every test folder that drives a real browser
(``tests/web/browser/``, ``tests/human/``): a conftest there imports them.

``browser`` (module): Debian's Chromium (``apt install chromium``, ``/usr/bin/chromium``)
driven by Playwright for Python. Playwright is pointed at that binary, so no
``playwright install`` download is needed. Without the browser or Playwright the tests
skip with one line saying why, except in CI (env ``CI`` set), where they fail: CI must
run them.

``page`` (test): a fresh page that records console errors and uncaught exceptions; a
test whose pages logged any fails at teardown (``watched_page``: the same, in a context
with options, a phone's say). ``screenshot(page, name)`` saves a
picture under test-artifacts/screenshots/.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from factories import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"


def _unavailable(reason: str) -> None:
    """Skip outside CI; in CI a missing browser is a broken setup, so fail loudly."""
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per module (starting one costs about a second). Not per
    session: Playwright's sync API keeps an event loop running in this thread while it
    is open, and every later test that calls asyncio.run() would fail."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} not found (apt install chromium)")
    with sync_playwright() as p:
        try:
            # --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
            launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Error as error:
            _unavailable(f"{CHROMIUM} does not start: {str(error).splitlines()[0]}")
        yield launched
        launched.close()


@contextmanager
def watched_page(browser: Browser, **context: Any) -> Iterator[Page]:
    """A fresh page in a context of its own (``context``: Playwright's ``new_context``
    options, a phone's viewport say); any console error or uncaught exception on any page
    it visits fails the test once the page is done. A document that answers an error
    status on purpose (a 404 or 403 page) logs its own failed load: not a fault of the page
    (a missing script, style or icon has another URL and still counts)."""
    opened_context = browser.new_context(**context)
    opened = opened_context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        own_status = message.location.get("url") == opened.url and re.search(r"status of [45]\d\d", message.text)
        if message.type == "error" and not own_status:
            errors.append(f"console: {message.text} ({opened.url})")

    opened.on("console", on_console)
    opened.on("pageerror", lambda error: errors.append(f"exception: {error} ({opened.url})"))
    yield opened
    opened_context.close()
    if errors:
        pytest.fail("errors in the browser:\n" + "\n".join(errors), pytrace=False)


# Every element the page's scripts animate (Element.animate, table.js's motion), kept in
# window.movedElements: whether a card moved is counted there, not read off the animations
# still running, which a busy machine may let finish before the test looks.
COUNT_MOTION = """(() => {
  window.movedElements = [];
  const animate = Element.prototype.animate;
  Element.prototype.animate = function (...args) { window.movedElements.push(this); return animate.apply(this, args); };
})()"""


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page (own context: nothing shared between tests), watched (``watched_page``)."""
    with watched_page(browser) as opened:
        yield opened


@pytest.fixture
def screenshot() -> Callable[[Page, str], None]:
    """``screenshot(page, name)``: keep a picture of the page for people (CI artifacts),
    compared to nothing."""

    def take(page: Page, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return take

