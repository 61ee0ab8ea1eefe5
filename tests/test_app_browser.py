"""The example shop in headless Chromium: offer, counter, restart the service, accept, deal."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser import chromium_page

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop" / "app.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def shop(service_process, tmp_path):
    """The seller service (scripted seller, SQLite) and the example shop in front of it."""
    service = service_process(seller="scripted/boulware")
    port = _free_port()
    env = {**os.environ, "NEGOTIATOR_URL": service.base_url, "NEGOTIATOR_API_KEY": service.key}
    log = open(tmp_path / "shop.log", "w")
    proc = subprocess.Popen([sys.executable, str(SHOP), "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError((tmp_path / "shop.log").read_text())
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url, service
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()


@pytest.mark.browser
def test_a_shopper_negotiates_in_the_page_across_a_service_restart(shop, tmp_path):
    url, service = shop
    with chromium_page() as page:
        page.goto(url)
        page.get_by_role("heading", name="standing desk").wait_for(timeout=30_000)
        moves = page.get_by_test_id("move")
        assert moves.count() == 0 and page.get_by_test_id("accept").is_disabled()

        # Offer the lowest price with a message; the seller counters.
        page.get_by_test_id("term-price").fill("507")
        page.fill("#message", "Would you take 507?")
        page.get_by_test_id("offer").click()
        moves.nth(1).wait_for(timeout=30_000)
        assert "Would you take 507?" in moves.nth(0).inner_text() and "price: 507" in moves.nth(0).inner_text()
        counter = moves.nth(1)
        assert counter.inner_text().startswith("Seller offered")
        counter_terms = counter.get_by_test_id("terms").inner_text()
        counter_price = int(counter_terms.split("price: ")[1].split(",")[0])
        assert counter_price >= 700  # the business's floor for this listing

        # The service restarts (new process, same SQLite file); the page reloads: all still there.
        service.restart()
        page.reload()
        moves.nth(1).wait_for(timeout=30_000)
        assert moves.count() == 2 and moves.nth(1).get_by_test_id("terms").inner_text() == counter_terms
        page.screenshot(path=str(tmp_path / "after-restart.png"))

        # Accept the counter: the deal shows exactly the seller's terms.
        page.get_by_test_id("accept").click()
        page.get_by_test_id("deal").wait_for(state="visible", timeout=30_000)
        assert page.get_by_test_id("agreed").inner_text() == counter_terms
        assert page.get_by_test_id("offer").is_disabled()
        page.screenshot(path=str(tmp_path / "deal.png"))
        assert page.locator("#error").inner_text() == ""
