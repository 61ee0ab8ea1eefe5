"""``negotiator report``: compare seller arms on identical negotiations; tables, plots, HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from .app import app, console, output_folder


@app.command("report")
def report_command(
    run_dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[FOLDER]...",
            help="Run folders written by `negotiator eval`, or folders above them (every run inside is read); "
            "shards of one arm merge. Default: runs/ (or $NEGOTIATOR_RUNS_DIR).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write summary.json, plots/ and report.html. Default: FOLDER/report for one folder, "
            "else report/ in the folder that holds them all."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the sign-flip and bootstrap resampling (0 or more).")] = 0,
) -> None:
    """Compare seller arms on identical negotiations: tables, summary.json, plots and report.html.

    One row per arm (seller score with a 95% CI clustered by scenario, deal rate, buyer score, Pareto
    and Nash distance, ...), per-buyer and per-persona breakdowns, and for every pair of arms the
    paired difference B - A (A = the first run) on the negotiations both played, with the p-value of a
    sign-flip test and the 95% CI of the same test. Warns when an evaluation buyer shares a model family
    with a trained seller's training buyer pool.
    """
    from evals.arms import load_arms
    from evals.report import build_report, plots_available, print_report, write_report
    from evals.runs import find_runs, is_run, report_folder, runs_root

    if not run_dirs:
        run_dirs = [runs_root()]
        if not run_dirs[0].is_dir():
            raise UsageError(
                f"no {run_dirs[0]}/ folder here: run `negotiator eval` first (it writes there), or pass the folder "
                "that holds your runs"
            )
    runs: list[str | Path] = [*find_runs(run_dirs)]
    arms = load_arms(runs)
    named = {p.resolve() for p in run_dirs if is_run(p)}
    for arm in [a for a in arms if not a.episodes]:
        if any(r.resolve() in named for r in arm.runs):
            raise UsageError(
                f"no readable negotiations in {', '.join(map(str, arm.runs))} ({arm.seller}); run `negotiator eval` "
                "into it first"
            )
        # found under a folder given: a run with no negotiation finished yet is left out, as one with no log
        console.print(f"note: left out {', '.join(map(str, arm.runs))}: no negotiation has finished there yet")
        arms.remove(arm)
    if not arms:
        raise UsageError(f"no negotiation has finished yet in the runs under {', '.join(map(str, run_dirs))}")
    out_dir = output_folder(out or report_folder(run_dirs))
    report = build_report(arms, seed=seed)
    print_report(report, console)
    files = write_report(report, out_dir, arms)
    plots = (
        f"plots:   {out_dir / 'plots'}"
        if plots_available()
        else "plots:   left out: matplotlib is not installed (pip install 'negotiator-sdk[evals]' adds them)"
    )
    console.print(
        f"summary: {files['summary']}\n{plots}\nreport:  {files['html']}", markup=False, highlight=False, soft_wrap=True
    )
