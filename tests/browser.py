"""Headless Chromium for browser tests: Debian's chromium driven by Playwright.

``playwright install`` cannot download browsers here, so Playwright launches the system
binary. Tests that use it are marked ``browser``; they skip with a reason when Chromium
or Playwright is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

CHROMIUM = os.environ.get("NEGOTIATOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@contextmanager
def chromium_page() -> Iterator[object]:
    """A fresh Playwright page in headless Chromium (sync API)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}; install Debian's chromium package")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page()
            yield page
        finally:
            browser.close()
