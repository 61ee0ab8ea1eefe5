"""report.html as a person sees it: headless Chromium, offline, tables and plots visible."""

from __future__ import annotations

import asyncio
import json

import pytest
from browser import chromium_page

from evals.arms import load_arms
from evals.report import build_report, write_report
from evals.runner import RunOptions, plan, run_jobs, write_config
from evals.suites import get_suite

pytestmark = pytest.mark.browser


async def _report(tmp_path):
    suite = get_suite("quick")
    dirs = []
    for seller in ("rule/boulware", "rule/conceder"):
        out = tmp_path / seller.replace("/", "_")
        await run_jobs(plan(suite, seller), out, RunOptions(concurrency=4))
        write_config(out, {"suite": suite.key, "seller": seller, "buyers": list(suite.buyers), "seed": 0})
        dirs.append(out)
    arms = load_arms(dirs)
    return write_report(build_report(arms), tmp_path / "report", arms)["html"]


def test_report_html_renders_offline_with_tables_and_images_visible(tmp_path):
    html = asyncio.run(_report(tmp_path))  # the sync Playwright API wants no running event loop
    requests = []
    with chromium_page() as page:
        page.route(
            "**/*",
            lambda route: (
                (requests.append(route.request.url), route.abort())
                if not route.request.url.startswith(("file:", "data:"))
                else route.continue_()
            ),
        )
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


# --- the transcript view -------------------------------------------------------------------

HOSTILE = '<img src=x onerror="window.pwned=1"></script><b id="pwned">bold</b>'


def _value(v) -> str:
    """A term as the page writes it (en-US, at most two decimals)."""
    if isinstance(v, str):
        return v
    return f"{v:,.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v):,}"


async def _transcript_report(tmp_path):
    suite = get_suite("quick")
    dirs = []
    for seller in ("rule/boulware", "scripted/hostile", "scripted/invalid"):
        out = tmp_path / seller.replace("/", "_")
        await run_jobs(plan(suite, seller), out, RunOptions(concurrency=4))
        write_config(out, {"suite": suite.key, "seller": seller, "buyers": list(suite.buyers), "seed": 0})
        dirs.append(out)
    # One buyer message is markup: the page must show it as text, never run it.
    log = dirs[0] / "episodes.jsonl"
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["turns"][next(i for i, t in enumerate(first["turns"]) if t["party"] == "buyer")]["action"]["message"] = (
        HOSTILE
    )
    log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    arms = load_arms(dirs)
    return write_report(build_report(arms), tmp_path / "report", arms)["html"], arms, first["episode_id"]


def _rows(page):
    rows = page.get_by_test_id("transcript-row")
    return [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())]


def _check_moves(page, ep):
    """Each row of the open transcript against the episode: party, action, terms, worth, message, guard, invalid."""
    sc = ep.scenario
    names = [i.name for i in sc.issues]
    moves = page.get_by_test_id("move")
    assert moves.count() == len(ep.turns)
    standing = {}
    for i, turn in enumerate(ep.turns):
        cells = moves.nth(i).locator("td").all_inner_texts()
        assert cells[:4] == [
            str(i + 1),
            str(i // 2 + 1),
            turn.party,
            {"make_offer": "offer", "accept": "accept", "walk_away": "walk away"}[turn.action.action],
        ]
        terms = (
            turn.action.terms
            if turn.action.action == "make_offer"
            else standing.get("buyer" if turn.party == "seller" else "seller")
        )
        if turn.action.action == "walk_away":
            terms = None
        if terms is not None:
            assert cells[4 : 4 + len(names)] == [_value(terms[k]) for k in names]
            u_s, u_b = (float(c) for c in cells[4 + len(names) : 6 + len(names)])
            assert abs(u_s - sc.seller.utility(terms)) < 6e-4 and abs(u_b - sc.buyer.utility(terms)) < 6e-4
        assert cells[-1] == turn.action.message
        if turn.action.action == "make_offer":
            standing[turn.party] = turn.action.terms
    guards = page.get_by_test_id("guard")
    wanted = [t.guard for t in ep.turns if t.guard is not None]
    assert guards.count() == len(wanted)
    for i, g in enumerate(wanted):
        cells = guards.nth(i).locator("td").all_inner_texts()
        assert cells[0] == "guard: " + ", ".join(g.kinds).replace("_", " ")
        if g.original.get("terms"):
            assert cells[2 : 2 + len(names)] == [_value(g.original["terms"][k]) for k in names]
            assert abs(float(cells[2 + len(names)]) - sc.seller.utility(g.original["terms"])) < 6e-4
        assert guards.nth(i).get_by_test_id("guard-message").inner_text() == g.original["message"].strip()
        for issue, reason in g.reasons.items():
            assert f"{issue}: {reason}" in guards.nth(i).get_by_test_id("guard-reasons").inner_text()
    invalid = page.get_by_test_id("invalid")
    attempts = [t.invalid_attempts for t in ep.turns if t.invalid_attempts]
    assert invalid.count() == len(attempts)
    for i, group in enumerate(attempts):
        errors = invalid.nth(i).get_by_test_id("invalid-error")
        assert [errors.nth(j).text_content() for j in range(errors.count())] == [f"\u2192 {a.error}" for a in group]
        raws = invalid.nth(i).get_by_test_id("invalid-raw")
        assert [raws.nth(j).text_content() for j in range(raws.count())] == [a.raw for a in group]


def test_transcripts_filter_open_and_show_what_the_episodes_hold(tmp_path):
    html, arms, hostile_id = asyncio.run(_transcript_report(tmp_path))
    episodes = [e for a in arms for e in a.episodes]
    requests = []
    with chromium_page() as page:
        page.route(
            "**/*",
            lambda route: (
                (requests.append(route.request.url), route.abort())
                if not route.request.url.startswith(("file:", "data:"))
                else route.continue_()
            ),
        )
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(html.as_uri())
        page.wait_for_selector("#transcript-view[data-ready]")
        count = page.get_by_test_id("count")
        assert count.inner_text() == "1\u201350 of 72 negotiations, page 1 of 2" and len(_rows(page)) == 50
        page.get_by_test_id("next-page").click()
        count.filter(has_text="51\u201372 of 72").wait_for()
        assert len(_rows(page)) == 22

        # A row of the per-buyer table opens that buyer's transcripts, a cell that buyer's in one arm.
        page.locator("table.by_buyer tr", has_text="rule/conceder").locator("td").first.locator("a").click()
        count.filter(has_text="of 18 negotiations").wait_for()
        assert {r[2] for r in _rows(page)} == {"rule/conceder"} and page.get_by_test_id(
            "filter-buyer"
        ).input_value() == "rule/conceder"
        page.locator("table.by_buyer tr", has_text="rule/conceder").locator("td").nth(2).locator("a").click()
        count.filter(has_text="of 6 negotiations").wait_for()
        assert {(r[1], r[2]) for r in _rows(page)} == {("scripted/hostile", "rule/conceder")}

        # The per-persona table opens a persona's transcripts (the quick suite has one persona).
        page.locator("table.by_persona tr", has_text="neutral").locator("td").first.locator("a").click()
        count.filter(has_text="of 72 negotiations").wait_for()
        assert page.get_by_test_id("filter-persona").input_value() == "neutral"
        page.get_by_test_id("filter-scenario").fill("standing desk")
        count.filter(has_text="of 12 negotiations").wait_for()  # one scenario x 4 buyers x 3 arms
        assert {r[0].split(" furniture-")[0] for r in _rows(page)} == {"standing desk"}

        # The filters: arm and outcome, counted against the episodes.
        page.get_by_test_id("clear").click()
        count.filter(has_text="of 72 negotiations").wait_for()
        assert (
            page.get_by_test_id("filter-scenario").input_value() == ""
            and page.get_by_test_id("filter-persona").input_value() == ""
        )
        page.get_by_test_id("filter-arm").select_option("scripted/invalid")
        page.get_by_test_id("filter-outcome").select_option("deal")
        deals = [e for e in arms[2].episodes if e.outcome.ended_by == "accept"]
        count.filter(has_text=f"of {len(deals)} negotiations").wait_for()
        assert 0 < len(deals) < 24 and {(r[1], r[4]) for r in _rows(page)} == {("scripted/invalid", "deal")}
        page.get_by_test_id("filter-outcome").select_option("no_deal")
        count.filter(has_text=f"of {24 - len(deals)} negotiations").wait_for()

        # Open one with invalid answers: every move, its worth, the invalid answers, the outcome.
        page.get_by_test_id("filter-outcome").select_option("")
        page.get_by_test_id("sort").select_option("score-desc")
        count.filter(has_text="of 24 negotiations").wait_for()
        best = max(arms[2].episodes, key=lambda e: e.metrics.seller_score)
        page.get_by_test_id("transcript-row").first.click()
        page.get_by_test_id("transcript").wait_for()
        assert page.get_by_test_id("transcript").get_attribute("data-id") == best.episode_id
        assert page.get_by_test_id("detail-arm").inner_text() == "scripted/invalid"
        assert page.get_by_test_id("seller-score").inner_text() == f"{best.metrics.seller_score:.3f}"
        assert page.get_by_test_id("outcome-text").inner_text().startswith("Deal, accepted by the")
        names = [i.name for i in best.scenario.issues]
        assert page.get_by_test_id("agreed").inner_text() == ", ".join(
            f"{i.title()}: {_value(best.outcome.terms[i.name])}{' ' + i.unit if i.unit else ''}"
            for i in best.scenario.issues
        )
        assert names and sum(1 for t in best.turns if t.invalid_attempts) > 0
        _check_moves(page, best)

        # The same negotiation in another arm, one click away: the hostile seller, where the guard stepped in.
        page.get_by_test_id("same-negotiation").filter(has_text="scripted/hostile").click()
        page.get_by_test_id("detail-arm").filter(has_text="scripted/hostile").wait_for()
        twin = next(e for e in arms[1].episodes if e.labels["negotiation"] == best.labels["negotiation"])
        assert page.get_by_test_id("transcript").get_attribute("data-id") == twin.episode_id
        assert twin.metrics.guard_interventions > 0
        _check_moves(page, twin)
        page.get_by_test_id("back").click()
        page.get_by_test_id("transcript-row").first.wait_for()

        # Markup in a message is shown as text.
        page.goto(html.as_uri() + f"#transcripts?open={hostile_id}")
        page.wait_for_selector("#transcript-view[data-ready]")
        page.get_by_test_id("transcript").wait_for()
        assert HOSTILE in page.get_by_test_id("moves").inner_text()
        assert page.locator("#pwned").count() == 0 and page.evaluate("window.pwned") is None
        _check_moves(page, next(e for e in episodes if e.episode_id == hostile_id))
    assert requests == []
