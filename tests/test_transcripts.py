"""The transcripts a report embeds: every move with its worth to each side, guard and invalid answers, safely packed."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html import unescape

import pytest

from evals.arms import load_arms
from evals.report import build_report, write_report
from evals.runner import RunOptions, plan, run_jobs, write_config
from evals.suites import get_suite
from evals.transcripts import RAW_MAX_CHARS, embed_json, transcript_data
from negotiator.party import Attempt
from negotiator.runtime.log import EpisodeLog, iter_episodes

QUICK = get_suite("quick")


async def _arm(out, seller):
    await run_jobs(plan(QUICK, seller), out, RunOptions(concurrency=4))
    write_config(out, {"suite": QUICK.key, "seller": seller, "buyers": list(QUICK.buyers), "seed": 0})
    return out


@pytest.fixture
async def arms(tmp_path):
    dirs = [
        await _arm(tmp_path / name, f"{kind}/{name}")
        for kind, name in (("rule", "boulware"), ("scripted", "hostile"), ("scripted", "invalid"))
    ]
    return load_arms(dirs)


def _terms(scenario, packed):
    return dict(zip([i.name for i in scenario.issues], packed, strict=False))


async def test_every_move_carries_its_terms_and_their_worth_to_seller_and_buyer(arms):
    data = transcript_data(arms)
    assert data["arms"] == ["rule/boulware", "scripted/hostile", "scripted/invalid"]
    assert len(data["episodes"]) == 72
    # The arms play the same six scenarios: each is stored once.
    assert len(data["scenarios"]) == len({e.scenario.id for a in arms for e in a.episodes}) == 6
    episodes = {e.episode_id: e for a in arms for e in a.episodes}
    checked = guards = invalid = 0
    for d in data["episodes"]:
        ep = episodes[d["id"]]
        sc = ep.scenario
        assert data["scenarios"][d["s"]]["id"] == sc.id and data["arms"][d["a"]] == ep.seller.spec
        assert (d["b"], d["p"], d["o"], d["by"]) == (
            ep.buyer.spec,
            "neutral",
            ep.outcome.ended_by,
            ep.outcome.ended_by_party,
        )
        assert d["x"]["seller_score"] == pytest.approx(ep.metrics.seller_score, abs=1e-6)
        assert (d["t"] is None) == (ep.outcome.terms is None)
        if d["t"] is not None:
            assert _terms(sc, d["t"]) == ep.outcome.terms
        assert len(d["m"]) == len(ep.turns)
        for move, turn in zip(d["m"], ep.turns, strict=False):
            assert move["p"] == turn.party[0] and move["m"] == turn.action.message
            assert move["a"] == {"make_offer": "o", "accept": "a", "walk_away": "w"}[turn.action.action]
            if turn.action.action == "make_offer":
                terms = _terms(sc, move["t"])
                assert terms == turn.action.terms
                assert move["u"] == [round(sc.seller.utility(terms), 4), round(sc.buyer.utility(terms), 4)]
                checked += 1
            if turn.guard is not None:
                guards += 1
                g = move["g"]
                assert g["k"] == turn.guard.kinds and g["r"] == turn.guard.reasons
                wanted = turn.guard.original
                assert g["o"]["a"] == {"make_offer": "o", "accept": "a", "walk_away": "w"}[wanted["action"]]
                assert g["o"]["m"] == wanted["message"]
                if wanted.get("terms"):
                    assert _terms(sc, g["o"]["t"]) == wanted["terms"]
                    assert g["o"]["u"][0] == round(sc.seller.utility(wanted["terms"]), 4)
            else:
                assert "g" not in move
            if turn.invalid_attempts:
                invalid += 1
                assert move["i"] == [[a.raw, a.error] for a in turn.invalid_attempts]
    hostile = sum(e.metrics.guard_interventions for e in arms[1].episodes)
    assert guards == hostile > 0 and checked > 200
    # the invalid arm's answers, and the hostile arm's made-up options before it picks a real one
    assert invalid == sum(1 for a in arms for e in a.episodes for t in e.turns if t.invalid_attempts)
    assert sum(1 for e in arms[2].episodes for t in e.turns if t.invalid_attempts) > 0


async def test_a_long_invalid_answer_is_cut_in_the_page_and_kept_in_the_log(arms):
    ep = arms[2].episodes[0]
    ep.turns[0].invalid_attempts.append(Attempt(raw="x" * (RAW_MAX_CHARS + 500), error="not JSON"))
    d = next(d for d in transcript_data(arms)["episodes"] if d["id"] == ep.episode_id)
    raw, error = d["m"][0]["i"][-1]
    assert (
        error == "not JSON" and raw.startswith("x" * RAW_MAX_CHARS) and "500 more characters in episodes.jsonl" in raw
    )
    assert len(raw) < RAW_MAX_CHARS + 60


def test_embedded_json_cannot_end_the_script_element():
    hostile = "</script><script>alert(1)</script><!-- \u2028 \u2029 & '"
    text = embed_json({"m": hostile})
    assert "<" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"m": hostile}


def _embedded(html: str) -> dict:
    m = re.search(
        r'<script type="application/octet-stream" id="transcript-data" data-encoding="gzip\+base64">([^<]*)</script>',
        html,
    )
    assert m, "no embedded transcripts"
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


async def test_report_html_embeds_the_transcripts_once_and_its_tables_link_to_them(arms, tmp_path):
    report = build_report(arms)
    html = write_report(report, tmp_path / "with", arms)["html"].read_text()
    assert _embedded(html) == json.loads(embed_json(transcript_data(arms)))
    assert html.count('id="transcript-data"') == 1
    # Per-buyer rows open the buyer's transcripts; each cell the buyer's in that arm.
    buyer_table = html.split('<table class="by_buyer">')[1].split("</table>")[0]
    rows = re.findall(r'<tr data-href="([^"]+)">(.*?)</tr>', buyer_table)
    assert [unescape(h) for h, _ in rows] == [
        f"#transcripts?buyer={b.replace('/', '%2F')}" for b in sorted(QUICK.buyers)
    ]
    first = unescape(rows[0][1])
    assert '<a href="#transcripts?arm=scripted%2Fhostile&buyer=rule%2Fboulware">' in first
    assert 'data-href="#transcripts?arm=rule%2Fboulware"' in html  # the arms table
    # Without the episodes, the same tables and no transcript view.
    plain = write_report(report, tmp_path / "without")["html"].read_text()
    assert "transcript-data" not in plain and "data-href" not in plain and "#transcripts" not in plain


async def test_episodes_without_labels_fall_back_to_their_parties(tmp_path):
    """Episodes written by run_negotiation directly (no suite labels): buyer and persona come from the buyer."""
    out = await _arm(tmp_path / "a", "rule/boulware")
    eps = list(iter_episodes(out / "episodes.jsonl"))
    (out / "episodes.jsonl").unlink()
    EpisodeLog(out / "episodes.jsonl").append_many([e.model_copy(update={"labels": {}}) for e in eps])
    data = transcript_data(load_arms([out]))
    assert {d["b"] for d in data["episodes"]} == set(QUICK.buyers) and {d["p"] for d in data["episodes"]} == {"neutral"}
