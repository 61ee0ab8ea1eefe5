"""``negotiator eval``: measure a seller against buyers it never trained against."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from ..errors import ProviderError, UsageError
from .app import EXIT_UNREACHABLE, Unreachable, app, console

DEFAULT_CLI_SELLER = "rule/boulware"


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:80]


def _parse_shard(shard: str | None) -> tuple[int, int] | None:
    if shard is None:
        return None
    m = re.fullmatch(r"(\d+)/(\d+)", shard.strip())
    if not m:
        raise UsageError(f"--shard {shard!r}: write it as i/n, e.g. 0/4")
    return int(m.group(1)), int(m.group(2))


@app.command("eval")
def eval_command(
    seller: Annotated[str, typer.Option(help="Seller spec: local/gemma-3-270m, rule/boulware, openai/gpt-4o-mini, hosted_vllm/MODEL ...")] = DEFAULT_CLI_SELLER,
    buyer: Annotated[Optional[list[str]], typer.Option(help="Evaluation buyer spec; repeat for several. Default: the suite's buyers.")] = None,
    suite: Annotated[str, typer.Option(help="Evaluation suite: quick (24 negotiations) or heldout.")] = "quick",
    limit: Annotated[Optional[int], typer.Option(help="Run at most N negotiations of the suite.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the buyers' tactics and sampling.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Negotiations in flight at once.")] = 8,
    seller_base_url: Annotated[Optional[str], typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM ...).")] = None,
    buyer_base_url: Annotated[Optional[str], typer.Option(help="Base URL of an OpenAI-compatible server for LLM buyers.")] = None,
    shard: Annotated[Optional[str], typer.Option(help="Run shard i of n (i/n) of the suite, for several machines.")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Output folder; rerunning into it resumes. Default runs/<suite>/<seller>.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Run a seller through an evaluation suite; write episodes.jsonl and summary.json; print a table.

    Rerunning the same command into the same --out folder resumes: finished negotiations are kept,
    only missing ones run.
    """
    from evals.runner import RunOptions, plan, run_jobs, write_config
    from evals.suites import get_suite
    from evals.summary import summarize

    from ..models.preflight import preflight
    from ..runtime.log import read_episodes

    st = get_suite(suite)
    jobs = plan(st, seller, buyer, seed=seed, limit=limit, shard=_parse_shard(shard))
    out_dir = out or Path("runs") / suite / _slug(seller)
    try:
        preflight(seller, seller_base_url)
        for b in buyer or st.buyers:
            preflight(b, buyer_base_url)
    except ProviderError as e:
        raise Unreachable(str(e)) from None
    write_config(out_dir, {"suite": st.key, "seller": seller, "buyers": list(buyer or st.buyers), "seed": seed, "limit": limit, "shard": shard})

    from ..runtime.log import episode_ids

    already = len({j.episode_id for j in jobs} & episode_ids(out_dir / "episodes.jsonl"))
    if already:
        console.print(f"resuming in {out_dir}: {already} of {len(jobs)} negotiations already done")
    options = RunOptions(concurrency=concurrency, seller_base_url=seller_base_url, buyer_base_url=buyer_base_url)

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, disable=quiet, transient=False,
    ) as progress:
        task = progress.add_task(f"{suite}: {seller}", total=len(jobs), completed=already)
        asyncio.run(run_jobs(jobs, out_dir, options, on_episode=lambda ep: progress.advance(task)))

    wanted = {j.episode_id for j in jobs}
    episodes = [e for e in read_episodes(out_dir / "episodes.jsonl") if e.episode_id in wanted]
    summary = summarize(episodes)
    summary["suite"] = st.key
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    print_table(summary, title=f"{seller} on {suite} ({len(episodes)} negotiations)")
    console.print(f"episodes: {out_dir / 'episodes.jsonl'}\nsummary:  {out_dir / 'summary.json'}")
    errors = [e for e in episodes if e.outcome.ended_by == "error"]
    if episodes and len(errors) == len(episodes) and all(e.error and e.error.type == "ProviderError" for e in errors):
        console.print(f"[bold red]every negotiation failed: {errors[0].error.message}[/]")
        raise typer.Exit(EXIT_UNREACHABLE)


def _f(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def print_table(summary: dict, title: str) -> None:
    table = Table(title=title)
    for col in ("buyer", "n", "seller score", "deal rate", "buyer score", "invalid", "fallbacks", "guard", "errors"):
        table.add_column(col, justify="left" if col == "buyer" else "right")
    rows = list(summary["by_buyer"].items()) + [("all", summary["overall"])]
    for name, b in rows:
        if not b.get("n"):
            continue
        table.add_row(
            name, str(b["n"]), _f(b["seller_score"]), _f(b["deal_rate"], 2), _f(b["buyer_score"]),
            str(b["invalid_actions"]), str(b["fallbacks"]), str(b["guard_interventions"]), str(b["errors"]),
            end_section=name != "all" and name == rows[-2][0],
        )
    console.print(table)
