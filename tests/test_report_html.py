"""report.html as a person sees it: headless Chromium, offline, tables and plots visible."""

from __future__ import annotations

import asyncio

import pytest

from evals.arms import load_arms
from evals.report import build_report, write_report
from evals.runner import RunOptions, plan, run_jobs, write_config
from evals.suites import get_suite

from browser import chromium_page

pytestmark = pytest.mark.browser


async def _report(tmp_path):
    suite = get_suite("quick")
    dirs = []
    for seller in ("rule/boulware", "rule/conceder"):
        out = tmp_path / seller.replace("/", "_")
        await run_jobs(plan(suite, seller), out, RunOptions(concurrency=4))
        write_config(out, {"suite": suite.key, "seller": seller, "buyers": list(suite.buyers), "seed": 0})
        dirs.append(out)
    return write_report(build_report(load_arms(dirs)), tmp_path / "report")["html"]


def test_report_html_renders_offline_with_tables_and_images_visible(tmp_path):
    html = asyncio.run(_report(tmp_path))  # the sync Playwright API wants no running event loop
    requests = []
    with chromium_page() as page:
        page.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                   if not route.request.url.startswith(("file:", "data:")) else route.continue_())
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        tables = page.locator("table")
        assert tables.count() >= 5
        arms = page.locator("table.arms tbody tr")
        assert arms.count() == 2 and arms.nth(0).is_visible()
        assert "rule/boulware" in arms.nth(0).inner_text() and "[" in arms.nth(0).inner_text()
        assert "rule/boulware better" in page.locator("table.comparisons").inner_text()
        images = page.evaluate(
            "Array.from(document.images).map(i => ({ok: i.complete && i.naturalWidth > 0, "
            "w: i.getBoundingClientRect().width, h: i.getBoundingClientRect().height, alt: i.alt}))"
        )
        assert len(images) == 4
        for img in images:
            assert img["ok"] and img["w"] > 300 and img["h"] > 150, img
        for i in range(4):
            assert page.locator("img").nth(i).is_visible()
    assert requests == []  # nothing was fetched from anywhere: it works offline
