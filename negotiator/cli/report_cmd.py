"""``negotiator report``: compare seller arms on identical negotiations; tables, plots, HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import UsageError
from .app import app, console, output_folder


@app.command("report")
def report_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR...", help="Run folders written by `negotiator eval --out`; shards of one arm merge."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write summary.json, plots/ and report.html. Default: RUN_DIR/report for one arm, ./report for several."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation resampling.")] = 0,
) -> None:
    """Compare seller arms on identical negotiations: tables, summary.json, plots and report.html.

    One row per arm (seller score with a 95% CI clustered by scenario, deal rate, buyer score, Pareto
    and Nash distance, ...), per-buyer and per-persona breakdowns, and for every pair of arms the
    paired difference B - A (A = the first folder) on the negotiations both played, with a 95% CI and
    a p-value. Warns when an evaluation buyer shares a model family with a trained seller's training
    buyer pool.
    """
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        raise UsageError(
            f"negotiator report needs {e.name} (statistics and plots): pip install numpy matplotlib, "
            "or install negotiator with its evals extra"
        ) from None
    from evals.arms import load_arms
    from evals.report import build_report, print_report, write_report

    for d in run_dirs:
        if d.exists() and not d.is_dir():
            raise UsageError(f"{d} is a file; pass run folders (the --out of `negotiator eval`)")
    arms = load_arms(run_dirs)
    out_dir = output_folder(out or (arms[0].runs[0] / "report" if len(arms) == 1 else Path("report")))
    empty = [a.name for a in arms if not a.episodes]
    if empty:
        raise UsageError(
            f"no readable negotiations in the run of {', '.join(empty)}; run `negotiator eval` into it first"
        )
    report = build_report(arms, seed=seed)
    print_report(report, console)
    files = write_report(report, out_dir, arms)
    console.print(f"summary: {files['summary']}\nplots:   {out_dir / 'plots'}\nreport:  {files['html']}")
