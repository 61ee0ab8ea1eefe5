"""report.html with every transcript at scale: file size, build time, and time to open in Chromium.

Builds arms of rule sellers against the held-out suite's rule buyers (1,152 negotiations
each, real episodes in seconds), writes the report with and without the transcript view,
and opens both in headless Chromium: time until the transcript list is ready, to open a
transcript, to apply a filter, to turn a page. Side by side in one run, so the ratios are
paired.

    python benchmarks/report_html.py                      # 3 arms x 1,152 (about 2 minutes here)
    python benchmarks/report_html.py --arms 1 --suite quick
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from evals.arms import load_arms  # noqa: E402
from evals.report import build_report, write_report  # noqa: E402
from evals.runner import RunOptions, plan, run_jobs, write_config  # noqa: E402
from evals.suites import get_suite  # noqa: E402
from evals.transcript_view import pack  # noqa: E402
from evals.transcripts import embed_json, transcript_data  # noqa: E402

SELLERS = ["rule/boulware", "rule/linear", "rule/conceder", "rule/boulware?e=0.05"]


async def make_arms(work: Path, suite_name: str, n_arms: int) -> list[Path]:
    suite = get_suite(suite_name)
    dirs = []
    for seller in SELLERS[:n_arms]:
        out = work / seller.replace("/", "_").replace("?", "_")
        await run_jobs(plan(suite, seller), out, RunOptions(concurrency=64))
        write_config(out, {"suite": suite.key, "seller": seller, "buyers": list(suite.buyers), "seed": 0})
        dirs.append(out)
    return dirs


OPEN_JS = """async (hash) => {
  const view = document.getElementById('transcript-view');
  const t0 = performance.now();
  location.hash = hash;
  await new Promise((r) => addEventListener('hashchange', r, {once: true}));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}"""


def browser_times(html: Path, repeats: int, transcripts: bool) -> dict[str, float]:
    from browser import chromium_page

    out: dict[str, list[float]] = {"open": [], "load": [], "transcript": [], "filter": [], "page": []}
    with chromium_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        for _ in range(repeats):
            page.goto("about:blank")
            page.goto(html.as_uri())
            out["load"].append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            if not transcripts:
                continue
            page.wait_for_selector("#transcript-view[data-ready]", timeout=120_000)
            out["open"].append(float(page.get_attribute("#transcript-view", "data-ready")))
            first = page.get_by_test_id("transcript-row").first.get_attribute("data-id")
            out["transcript"].append(page.evaluate(OPEN_JS, f"#transcripts?open={first}"))
            out["filter"].append(page.evaluate(OPEN_JS, "#transcripts?outcome=deadline&sort=score-asc"))
            out["page"].append(page.evaluate(OPEN_JS, "#transcripts?outcome=deadline&sort=score-asc&page=3"))
    return {k: statistics.median(v) for k, v in out.items() if v}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="heldout")
    p.add_argument("--arms", type=int, default=3, choices=range(1, len(SELLERS) + 1))
    p.add_argument("--repeats", type=int, default=3, help="page opens per report (median)")
    p.add_argument("--work", type=Path, help="keep the runs and reports here (default: a temporary folder)")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        t = time.perf_counter()
        dirs = asyncio.run(make_arms(work, args.suite, args.arms))
        print(f"episodes: {args.arms} arms x {args.suite} in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        arms = load_arms(dirs)
        load_s = time.perf_counter() - t
        n = sum(len(a.episodes) for a in arms)
        log_mb = sum((d / "episodes.jsonl").stat().st_size for d in dirs) / 1e6
        report = build_report(arms)

        write_report(report, work / "report-warmup")  # imports matplotlib, draws once: not part of either figure
        t = time.perf_counter()
        plain = write_report(report, work / "report-plain")["html"]
        plain_s = time.perf_counter() - t
        t = time.perf_counter()
        full = write_report(report, work / "report", arms)["html"]
        full_s = time.perf_counter() - t
        data = transcript_data(arms)
        json_mb, packed_mb = len(embed_json(data).encode()) / 1e6, len(pack(data)) / 1e6

        print(
            f"\n{n:,} negotiations ({len(data['scenarios'])} distinct scenarios), episode logs {log_mb:.1f} MB, loaded in {load_s:.1f} s"
        )
        print(f"transcript data: {json_mb:.1f} MB of compact JSON, {packed_mb:.2f} MB embedded (gzip + base64)")
        print(
            f"report.html: {full.stat().st_size / 1e6:.2f} MB with transcripts, {plain.stat().st_size / 1e6:.2f} MB without"
        )
        print(f"write_report: {full_s:.2f} s with transcripts, {plain_s:.2f} s without (+{full_s - plain_s:.2f} s)")
        try:
            with_t = browser_times(full, args.repeats, True)
            without = browser_times(plain, args.repeats, False)
        except BaseException as e:  # pytest.skip (no Chromium) is a BaseException
            print(f"no browser timings: {e}")
            return
        print(f"\nheadless Chromium, median of {args.repeats} opens:")
        print(
            f"  load event: {with_t['load']:.0f} ms with transcripts, {without['load']:.0f} ms without "
            f"(ratio {with_t['load'] / without['load']:.2f})"
        )
        print(
            f"  transcript list ready (unpacked, parsed, first page drawn): {with_t['open']:.0f} ms after navigation start"
        )
        print(
            f"  open a transcript: {with_t['transcript']:.0f} ms; filter + sort all {n:,}: {with_t['filter']:.0f} ms; "
            f"next page: {with_t['page']:.0f} ms"
        )


if __name__ == "__main__":
    main()
