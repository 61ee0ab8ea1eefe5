"""The example shop in headless Chromium: offer, counter, restart the service, accept, deal; a shopper's
mistakes answered in the shop's words; nothing the page loads is missing (the favicon)."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser import chromium_page

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop" / "app.py"


@pytest.fixture
def shop(service_process, tmp_path):
    """The seller service (scripted seller, SQLite) and the example shop in front of it."""
    service = service_process(seller="scripted/boulware")
    env = {**os.environ, "NEGOTIATOR_URL": service.base_url, "NEGOTIATOR_API_KEY": service.key}
    log = open(tmp_path / "shop.log", "w")
    proc = subprocess.Popen(  # port 0: the shop binds a free port and prints it (no port chosen in advance)
        [sys.executable, str(SHOP), "--port", "0"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 120
        while not (m := re.search(r"shop at (http://127\.0\.0\.1:\d+)/", (tmp_path / "shop.log").read_text())):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the shop printed no address:\n{(tmp_path / 'shop.log').read_text()}")
            time.sleep(0.05)
        url = m.group(1)
        for _ in range(300):  # bound before it prints; the app answers once uvicorn has started
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


def _listing():
    """The scenario the shop's listing.json names, generated as the service generates it."""
    from negotiator.sim import generate

    spec = json.loads((SHOP.parent / "listing.json").read_text())
    scenario = generate(spec["seed"], spec["template"], version=spec["generator"])
    return scenario, spec["limits"]["minimum"]["price"]


def _dollars(text: str) -> float:
    """'$1,014' or '$922.03' -> the number; anything else fails the test."""
    m = re.fullmatch(r"\$(\d{1,3}(?:,\d{3})*)(\.\d\d)?", text)
    assert m, f"not a US-dollar amount: {text!r}"
    return float(m.group(1).replace(",", "") + (m.group(2) or ""))


@pytest.mark.browser
def test_a_shopper_negotiates_in_the_page_across_a_service_restart(shop, tmp_path):
    url, service = shop
    scenario, floor = _listing()
    with chromium_page() as page:
        page.goto(url)
        # The product as a commerce page shows it: a title, the list price in the currency's format.
        page.get_by_role("heading", name="Standing Desk", exact=True).wait_for(timeout=30_000)
        assert scenario.product.name == "standing desk" and page.title().startswith("Standing Desk")
        # The list price is the top of what may be offered (no offer above the sticker), on the price's step.
        list_price = page.get_by_test_id("list-price").inner_text()
        assert list_price == "$922" and page.get_by_test_id("list-price").is_visible()
        assert _dollars(list_price) == scenario.product.list_price == scenario.space.issue("price").high
        moves = page.get_by_test_id("move")
        assert moves.count() == 0 and page.get_by_test_id("accept").is_disabled()
        assert page.get_by_test_id("typing").is_hidden()

        # Human labels for issues and options, never the raw keys.
        names = [i.name for i in scenario.issues]
        assert names == ["price", "delivery_days", "assembly", "payment_terms"]
        assert [page.get_by_test_id(f"label-{n}").inner_text() for n in names] == [
            "Price",
            "Delivery",
            "Assembly",
            "Payment",
        ]
        options = {n: page.get_by_test_id(f"term-{n}").locator("option").all_inner_texts() for n in names[1:]}
        assert options == {
            "delivery_days": ["3 days", "7 days", "14 days", "28 days"],
            "assembly": ["Not included", "Included"],
            "payment_terms": ["Pay up front", "Net 30 days", "Net 60 days"],
        }
        page_text = page.locator("body").inner_text()
        for raw in ("delivery_days", "delivery days", "(days)", "net30", "upfront", "payment_terms", "(USD)"):
            assert raw not in page_text, raw
        # The price box starts at the list price: nowhere near the bottom of the range, or the floor.
        price = page.get_by_test_id("term-price")
        assert price.input_value() == str(round(scenario.product.list_price)) and float(price.input_value()) > floor

        # Offer a low price with a message; while the seller answers, the page says so.
        held = []
        page.route("**/api/negotiations/*/moves", lambda route: held.append(route))
        price.fill("650")
        page.fill("#message", "Would you take 650?")
        page.get_by_test_id("offer").click()
        page.get_by_test_id("typing").wait_for(state="visible", timeout=10_000)
        assert page.get_by_test_id("typing").inner_text().startswith("The seller is typing")
        while not held:  # the request is on its way: let it through only now
            page.wait_for_timeout(20)
        assert page.get_by_test_id("typing").is_visible() and moves.count() == 0
        held[0].continue_()
        page.unroute("**/api/negotiations/*/moves")
        moves.nth(1).wait_for(timeout=30_000)
        page.get_by_test_id("typing").wait_for(state="hidden", timeout=10_000)
        mine = moves.nth(0).inner_text()
        assert "Would you take 650?" in mine and "Price: $650 · Delivery: 3 days" in mine
        counter = moves.nth(1)
        assert counter.inner_text().startswith("Seller offered")
        counter_terms = counter.get_by_test_id("terms").inner_text()
        parts = dict(p.split(": ", 1) for p in counter_terms.split(" · "))
        assert list(parts) == ["Price", "Delivery", "Assembly", "Payment"]
        counter_price = _dollars(parts["Price"])
        assert counter_price >= floor  # the business's floor for this listing
        # The form now starts from the seller's standing offer.
        assert float(price.input_value()) == counter_price

        # The service restarts (new process, same SQLite file); the page reloads: all still there.
        service.restart()
        page.reload()
        moves.nth(1).wait_for(timeout=30_000)
        assert moves.count() == 2 and moves.nth(1).get_by_test_id("terms").inner_text() == counter_terms
        page.screenshot(path=str(tmp_path / "after-restart.png"))

        # Accept the counter: the deal shows exactly the seller's terms. Accepting ends the talk: no typing.
        page.get_by_test_id("accept").click()
        page.get_by_test_id("deal").wait_for(state="visible", timeout=30_000)
        assert page.get_by_test_id("agreed").inner_text() == counter_terms
        assert page.get_by_test_id("offer").is_disabled() and page.get_by_test_id("typing").is_hidden()
        page.screenshot(path=str(tmp_path / "deal.png"))
        assert page.locator("#error").inner_text() == ""


# What the service's messages say to a developer: none of it may reach a shopper.
API_WORDS = ("allowed range", "outside", "action", "terms", "restated", "invalid", "expected_turn", "..")


@pytest.mark.browser
def test_a_shoppers_mistakes_get_the_shops_words_and_no_page_asset_is_missing(shop):
    url, _ = shop
    scenario, limit = _listing()
    price_issue = scenario.space.issue("price")
    secrets = {limit, scenario.seller_limits.minimum["price"]}  # the business's floors: never shown
    failed, refused = [], []
    with chromium_page() as page:
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.on("response", lambda r: r.status >= 400 and refused.append((r.status, r.url)))
        page.goto(url)
        page.get_by_role("heading", name="Standing Desk", exact=True).wait_for(timeout=30_000)
        page.wait_for_load_state("networkidle")
        # Loading the page asked for nothing the shop lacks: no 404 (the favicon), nothing refused.
        assert refused == [] and failed == []
        icon = page.locator("link[rel=icon]").get_attribute("href")
        for path in (icon, "/favicon.ico"):
            r = httpx.get(url + path, timeout=10)
            assert (
                r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml") and b"<svg" in r.content
            )

        def said() -> str:
            page.locator("#error").filter(has_text=re.compile(".")).wait_for(timeout=30_000)
            text = page.locator("#error").inner_text()
            page.evaluate("document.getElementById('error').textContent = ''")
            return text

        # A message before any offer: the API refuses it in its own terms; the shop says what to do.
        page.fill("#message", "Hello, is the price negotiable?")
        page.get_by_test_id("send").click()
        assert said() == "Make an offer first: your message goes with it."
        assert refused[-1][0] == 422  # the service's answer, mapped: not a check the page made instead

        # A price below what the listing allows, and one above it: the public range, in dollars.
        price = page.get_by_test_id("term-price")
        price.fill("100")
        page.get_by_test_id("offer").click()
        below = said()
        assert below == f"Offers on this item start at ${price_issue.low:,.0f}." == "Offers on this item start at $507."
        assert refused[-1][0] == 422
        price.fill("5000")
        page.get_by_test_id("offer").click()
        above = said()
        assert above == "Offers on this item go up to $922."
        price.fill("")
        page.get_by_test_id("offer").click()
        empty = said()
        assert empty == "Please enter a price from $507 to $922."
        for text in (below, above, empty):
            assert not any(w in text.lower() for w in API_WORDS), text
            assert not any(f"{x:,.0f}" in text or f"{x:g}" in text for x in secrets), text
        # Nothing was played: the shopper's offers were refused before they reached the seller.
        assert page.get_by_test_id("move").count() == 0

        # A valid offer still goes through after the mistakes, and the conversation goes on.
        price.fill("650")
        page.get_by_test_id("offer").click()
        page.get_by_test_id("move").nth(1).wait_for(timeout=30_000)
        assert page.locator("#error").inner_text() == ""

        # A second tab moves first: this one is behind. The shop says so and shows where things stand.
        other = page.context.browser.new_page()
        other.goto(page.url)
        other.get_by_test_id("move").nth(1).wait_for(timeout=30_000)
        other.get_by_test_id("walk").click()
        other.get_by_test_id("ended").wait_for(state="visible", timeout=30_000)
        price.fill("700")
        page.get_by_test_id("offer").click()
        behind = said()
        assert behind.startswith("The conversation moved on while you were deciding")
        page.get_by_test_id("ended").wait_for(state="visible", timeout=30_000)
        assert refused[-1][0] == 409


def test_the_shop_backend_forwards_only_negotiation_paths_and_lets_the_service_judge_bodies(shop, tmp_path):
    # Before: a body that was not JSON (or nested 100,000 deep) was a plain-text 500 with a stack trace in
    # the shop's log, a 100,000-character id a 500 (httpx: URL too long), and "<id>%23" reached the service.
    url, _ = shop
    opened = httpx.post(f"{url}/api/negotiations").json()
    moves = f"{url}/api/negotiations/{opened['id']}/moves"
    json_type = {"content-type": "application/json"}
    for body, status, code, says in (
        (b'{"action":', 400, "invalid_request", "the body is not a JSON object (Expecting value at character 10)"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "invalid_request", "(it is nested too deeply)"),
        (b"x" * 3_000_000, 413, "too_large", "the request body is over 1000000 bytes"),
    ):
        r = httpx.post(moves, content=body, headers=json_type, timeout=60)
        assert (r.status_code, r.json()["error"]) == (status, code), r.text
        assert says in r.json()["message"]
    for odd in ("a" * 100_000, f"{opened['id']}%23", "..", f"{opened['id'][:31]}"):
        for method, path, body in (
            ("GET", f"/api/negotiations/{odd}", None),
            ("POST", f"/api/negotiations/{odd}/moves", b'{"action": "walk_away"}'),
        ):
            host = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=60)  # any URL length
            host.request(method, path, body=body, headers=json_type)
            answer = host.getresponse()
            assert answer.status == 404 and json.loads(answer.read()) == {
                "error": "not_found",
                "message": "No conversation with this id: open a new one.",
            }, (odd, method)
    r = httpx.post(moves, json={"action": "walk_away", "expected_turn": opened["turn"]})
    assert r.status_code == 200 and r.json()["status"] == "no_deal"
    assert "Traceback" not in (tmp_path / "shop.log").read_text()


@pytest.mark.browser
def test_a_page_opened_while_the_service_is_down_says_so_and_offers_no_button(shop):
    # Before: "Make offer", "Send message" and "Walk away" were enabled over an empty form, and a click
    # threw in the page's script (no negotiation to read): the shopper's clicks did nothing, silently.
    url, service = shop
    service.stop()
    errors = []
    with chromium_page() as page:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.locator("#error").filter(has_text=re.compile(".")).wait_for(timeout=30_000)
        assert page.locator("#error").inner_text() == (
            "The seller can't answer right now. Nothing was sent: please try again in a moment."
        )
        assert [page.get_by_test_id(b).is_disabled() for b in ("offer", "send", "accept", "walk")] == [True] * 4
        service.start()  # the same port: the shopper tries again
        page.reload()
        page.get_by_role("heading", name="Standing Desk", exact=True).wait_for(timeout=30_000)
        assert page.get_by_test_id("offer").is_enabled() and page.locator("#error").inner_text() == ""
    assert errors == []
