"""``negotiator eval``: measure a seller against buyers it never trained against."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..errors import ProviderError, UsageError
from .app import EXIT_UNREACHABLE, Unreachable, app, console

DEFAULT_CLI_SELLER = "local/gemma-3-270m"  # the embedded model: offline, no key, served like vLLM

# What defines a run, as recorded in config.json; --resume DIR takes them from there.
_RUN_FLAGS = {"seller": "seller", "buyer": "buyers", "suite": "suite_name", "seed": "seed", "limit": "limit", "shard": "shard"}


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:80]


def _parse_shard(shard: str | None) -> tuple[int, int] | None:
    if shard is None:
        return None
    m = re.fullmatch(r"(\d+)/(\d+)", shard.strip())
    if not m:
        raise UsageError(f"--shard {shard!r}: write it as i/n, e.g. 0/4")
    return int(m.group(1)), int(m.group(2))


def _parse_rate_limits(items: list[str] | None) -> dict[str, float]:
    out = {}
    for item in items or []:
        provider, eq, rpm = item.partition("=")
        try:
            out[provider.strip()] = float(rpm)
        except ValueError:
            eq = ""
        if not eq or not provider.strip():
            raise UsageError(f"--rate-limit {item!r}: write PROVIDER=CALLS_PER_MINUTE, e.g. openai=500 or hosted_vllm=120")
    return out


def _resume_settings(ctx: typer.Context, resume: Path, given: dict) -> dict:
    """The run settings recorded in ``resume``/config.json; flags given anew must agree with them."""
    from evals.runner import read_config

    config = read_config(resume)
    recorded = {
        "seller": config.get("seller"), "buyer": config.get("buyers"), "suite": config.get("suite_name"),
        "seed": config.get("seed"), "limit": config.get("limit"), "shard": config.get("shard"),
    }
    if recorded["suite"] is None:
        raise UsageError(f"{resume}/config.json does not name its suite; rerun the original command with --out {resume}")
    for flag, value in given.items():
        source = ctx.get_parameter_source(flag)  # typer may bring its own click: compare by name
        if getattr(source, "name", None) == "COMMANDLINE" and value != recorded[flag]:
            raise UsageError(
                f"--{flag} {value} differs from the run in {resume} ({recorded[flag]}); drop it to resume, "
                "or choose a new --out folder for a different run"
            )
    return recorded


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    seller: Annotated[str, typer.Option(help="Seller spec: local/gemma-3-270m, rule/boulware, openai/gpt-4o-mini, hosted_vllm/MODEL ...")] = DEFAULT_CLI_SELLER,
    buyer: Annotated[Optional[list[str]], typer.Option(help="Evaluation buyer spec; repeat for several (the paper uses two, from two model families). Default: the suite's buyers. rule/persona plays each persona's own tactic.")] = None,
    suite: Annotated[str, typer.Option(help="Evaluation suite: quick (24 negotiations) or heldout (48 scenarios x 12 personas x 2 buyers = 1,152).")] = "quick",
    limit: Annotated[Optional[int], typer.Option(help="Run at most N negotiations of the suite.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the buyers' tactics and sampling.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Negotiations in flight at once.")] = 8,
    seller_base_url: Annotated[Optional[str], typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM ...).")] = None,
    buyer_base_url: Annotated[Optional[str], typer.Option(help="Base URL of an OpenAI-compatible server for LLM buyers.")] = None,
    rate_limit: Annotated[Optional[list[str]], typer.Option(help="PROVIDER=CALLS_PER_MINUTE, e.g. openai=500; repeatable. Provider = the spec's prefix.")] = None,
    timeout: Annotated[Optional[float], typer.Option(help="Seconds per model call before it counts as a transient failure (default 120).")] = None,
    retries: Annotated[int, typer.Option(help="Replays of a negotiation that still failed on a transient provider error (429, 5xx, timeout) after the per-call retries.")] = 2,
    shard: Annotated[Optional[str], typer.Option(help="Run shard i of n (i/n) of the suite, for several machines; `negotiator report` merges shards.")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Output folder; rerunning into it resumes. Default runs/<suite>/<seller>.")] = None,
    resume: Annotated[Optional[Path], typer.Option(help="Continue the run in this folder with its recorded settings (after a crash or kill).")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Run a seller through an evaluation suite; write episodes.jsonl and summary.json; print a table.

    Every finished negotiation is appended to episodes.jsonl at once. Rerunning the same command
    into the same --out folder (or --resume FOLDER) runs only the missing negotiations.
    Compare arms with `negotiator report RUN_DIR [RUN_DIR ...]`.
    """
    from evals.arms import family_warnings, training_pool
    from evals.report import run_table
    from evals.runner import RunOptions, plan, run_jobs, write_config
    from evals.suites import get_suite
    from evals.summary import summarize

    from ..models.local.servers import local_servers
    from ..models.preflight import preflight
    from ..runtime.log import episode_ids, read_episodes

    if resume is not None:
        given = {"seller": seller, "buyer": buyer, "suite": suite, "seed": seed, "limit": limit, "shard": shard}
        settings = _resume_settings(ctx, resume, given)
        seller, buyer, suite, seed, limit, shard = (settings[k] for k in ("seller", "buyer", "suite", "seed", "limit", "shard"))
        if out is not None and out.resolve() != resume.resolve():
            raise UsageError("--resume DIR continues the run in DIR: drop --out, or give the same folder")
        out = resume
    st = get_suite(suite)
    buyers = list(dict.fromkeys(buyer or st.buyers))
    jobs = plan(st, seller, buyers, seed=seed, limit=limit, shard=_parse_shard(shard))
    options = RunOptions(
        concurrency=concurrency, seller_base_url=seller_base_url, buyer_base_url=buyer_base_url,
        rate_limits=_parse_rate_limits(rate_limit), call_timeout=timeout, retries=retries,
    )
    options.check()
    out_dir = out or Path("runs") / suite / _slug(seller)
    try:
        preflight(seller, seller_base_url)
        for b in buyers:
            preflight(b, buyer_base_url)
    except ProviderError as e:
        raise Unreachable(str(e)) from None
    pool = training_pool({"seller": seller})
    write_config(out_dir, {
        "suite": st.key, "suite_name": st.name, "suite_fingerprint": st.fingerprint(), "seller": seller, "buyers": buyers,
        "seed": seed, "limit": limit, "shard": shard, "seller_base_url": seller_base_url, "buyer_base_url": buyer_base_url,
        "training": pool,
    })
    for w in family_warnings(seller, buyers, pool):
        console.print(f"[bold yellow]warning:[/] {w}")

    already = len({j.episode_id for j in jobs} & episode_ids(out_dir / "episodes.jsonl"))
    if already:
        console.print(f"resuming in {out_dir}: {already} of {len(jobs)} negotiations already done")

    # local/ models: prepared (first use) and served before the bar starts, stopped when the run ends or fails.
    with local_servers([seller, *buyers], say=console.print), Progress(
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
    console.print(run_table(summary, title=f"{seller} on {suite} ({len(episodes)} negotiations)"))
    if summary["overall"].get("seller_score") is not None and not summary["overall"].get("seller_score_ci"):
        console.print("confidence intervals and `negotiator report` need numpy: pip install numpy matplotlib "
                      "(or install negotiator with its evals extra)")
    console.print(f"episodes: {out_dir / 'episodes.jsonl'}\nsummary:  {out_dir / 'summary.json'}\n"
                  f"report:   negotiator report {out_dir} [OTHER_RUN ...]")
    errors = [e for e in episodes if e.outcome.ended_by == "error"]
    if errors:
        console.print(f"[bold yellow]{len(errors)} negotiations ended in an error[/] (left out of the scores): {errors[0].error.message}")
    if episodes and len(errors) == len(episodes) and all(e.error and e.error.type == "ProviderError" for e in errors):
        console.print(f"[bold red]every negotiation failed: {errors[0].error.message}[/]")
        raise typer.Exit(EXIT_UNREACHABLE)
