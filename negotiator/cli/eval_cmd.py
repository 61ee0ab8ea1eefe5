"""``negotiator eval``: measure a seller against buyers it never trained against."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..errors import ProviderError, UsageError
from .app import DEFAULT_SELLER, EXIT_UNREACHABLE, Unreachable, app, console, output_folder

# What a run measures, as recorded in config.json (parameter -> key). On --resume these come
# from the record, and one given anew must agree with it: a different seller, plan or endpoint
# would mix two runs in one folder or send the rest of the negotiations somewhere else.
FIXED = {
    "seller": "seller",
    "buyer": "buyers",
    "suite": "suite_name",
    "seed": "seed",
    "limit": "limit",
    "shard": "shard",
    "seller_base_url": "seller_base_url",
    "buyer_base_url": "buyer_base_url",
}
# How a run is carried out, not what it measures: recorded and reused on --resume; a value
# given anew wins (fewer calls per minute after a 429 storm, less concurrency on a smaller box).
TUNABLE = {"concurrency": "concurrency", "rate_limit": "rate_limits", "timeout": "timeout", "retries": "retries"}


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
            raise UsageError(
                f"--rate-limit {item!r}: write PROVIDER=CALLS_PER_MINUTE, e.g. openai=500 or hosted_vllm=120"
            )
    return out


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _given(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)  # typer may bring its own click: compare by name
    return getattr(source, "name", None) == "COMMANDLINE"


def _as_recorded(name: str, value):
    """A flag's value in the form config.json records it."""
    if name == "buyer":
        return list(dict.fromkeys(value)) if value else value
    if name == "rate_limit":
        return _parse_rate_limits(value) if isinstance(value, list) else value or {}
    return value


def _protocol_form(
    seller: str, buyer: list[str] | None, buyer_model: list[str] | None, given: set[str]
) -> tuple[str, list[str] | None]:
    """(seller, buyers) of ``--buyer mcp+http://... --buyer-model M``: the seller measured is the one served
    at the URL, the buyers are the agents that reach it. ``--seller URL --buyer M`` is the same run, recorded
    the same (the same episode ids, config and resume), so either form resumes the other."""
    from ..models.specs import parse_spec

    remote = [b for b in buyer or [] if parse_spec(b).kind in ("mcp", "a2a")]
    if not remote:
        if buyer_model:
            raise UsageError(
                "--buyer-model is the model of a buyer agent that reaches a seller over a protocol: give it "
                "with --buyer mcp+http://HOST:PORT/mcp or --buyer a2a+http://HOST:PORT"
            )
        return seller, buyer
    if len(buyer or []) > 1:
        raise UsageError(
            f"--buyer {remote[0]} reaches the seller served there: give it once, and the buyer agents "
            "as --buyer-model (repeat it for several)"
        )
    if "seller" in given:
        raise UsageError(f"--buyer {remote[0]} measures the seller served there: drop --seller {seller}")
    given.add("seller")
    if buyer_model:
        given.add("buyer")
    else:
        given.discard("buyer")
    return remote[0], list(buyer_model) if buyer_model else None


def _resume_settings(given: set[str], resume: Path, values: dict) -> dict:
    """The settings of the run recorded in ``resume``/config.json, as flag values.

    Fixed settings given anew must agree with the record (a UsageError names the first that
    does not); tunable ones given anew replace the recorded value.
    """
    from evals.runner import read_config

    config = read_config(resume)
    for key, kind in (("suite_name", str), ("seller", str), ("buyers", list), ("seed", int)):
        if not isinstance(config.get(key), kind):
            raise UsageError(
                f"{resume}/config.json does not record its {key}; rerun the original command with --out {resume} "
                "(the negotiations already logged are kept)"
            )
    out = dict(values)
    for name, key in FIXED.items():
        recorded = config.get(key)
        if name in given and _as_recorded(name, values[name]) != recorded:
            shown = " ".join(values[name]) if name == "buyer" else values[name]
            raise UsageError(
                f"{_flag(name)} {shown} differs from the run in {resume} ({_show(recorded)}); drop it to resume that run, "
                "or choose a new --out folder for a different run"
            )
        out[name] = recorded
    for name, key in TUNABLE.items():
        if name not in given and config.get(key) is not None:
            out[name] = config[key]
    return out


def _show(value) -> str:
    if value is None:
        return "not set"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    seller: Annotated[
        str,
        typer.Option(help="Seller spec: local/gemma-3-270m, rule/boulware, openai/gpt-4o-mini, hosted_vllm/MODEL ..."),
    ] = DEFAULT_SELLER,
    buyer: Annotated[
        list[str] | None,
        typer.Option(
            help="Evaluation buyer spec; repeat for several (the paper uses two, from two model families). Default: the suite's buyers. rule/persona plays each persona's own tactic; pkg.module:factory or a registered name plays your own (docs/plugins.md). mcp+http://HOST:PORT/mcp or a2a+http://HOST:PORT: buyer agents that negotiate with the seller served there, over the protocol (with --buyer-model)."
        ),
    ] = None,
    buyer_model: Annotated[
        list[str] | None,
        typer.Option(
            help="With --buyer mcp+http://... or a2a+http://...: the buyer agent's spec (rule/..., an LLM, your own party); repeat for several. Default: the suite's buyers."
        ),
    ] = None,
    suite: Annotated[
        str,
        typer.Option(
            help="Evaluation suite: quick (24 negotiations) or heldout (48 scenarios x 12 personas x 2 buyers = 1,152)."
        ),
    ] = "quick",
    limit: Annotated[int | None, typer.Option(help="Run at most N negotiations of the suite.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the buyers' tactics and sampling.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Negotiations in flight at once.")] = 8,
    seller_base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM ...).")
    ] = None,
    buyer_base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server for LLM buyers.")
    ] = None,
    rate_limit: Annotated[
        list[str] | None,
        typer.Option(help="PROVIDER=CALLS_PER_MINUTE, e.g. openai=500; repeatable. Provider = the spec's prefix."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Seconds per model call before it counts as a transient failure (default 120)."),
    ] = None,
    retries: Annotated[
        int,
        typer.Option(
            help="Replays of a negotiation that still failed on a transient provider error (429, 5xx, timeout) after the per-call retries."
        ),
    ] = 2,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run shard i of n (i/n) of the suite, for several machines; `negotiator report` merges shards."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder; rerunning into it resumes. Default runs/<suite>/<seller>.")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(help="Continue the run in this folder with its recorded settings (after a crash or kill)."),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    workers: Annotated[
        str,
        typer.Option(
            help="Processes for a rule-vs-rule arm: auto (one per core from 200 negotiations on) or a number. Arms with model parties run in one process."
        ),
    ] = "auto",
) -> None:
    """Run a seller through an evaluation suite; write episodes.jsonl and summary.json; print a table.

    Every finished negotiation is appended to episodes.jsonl at once. Rerunning the same command
    into the same --out folder (or --resume FOLDER) runs only the missing negotiations.
    Compare arms with `negotiator report RUN_DIR [RUN_DIR ...]`.
    """
    from evals.arms import family_warnings, training_pool
    from evals.runner import RunOptions, plan, read_config, write_config
    from evals.suites import get_suite

    from ..models.preflight import preflight
    from ..runtime.log import EpisodeLog, damaged_path, describe, episode_ids

    given = {name for name in (*FIXED, *TUNABLE) if _given(ctx, name)}
    seller, buyer = _protocol_form(seller, buyer, buyer_model, given)
    if resume is not None:
        if resume.exists() and not resume.is_dir():
            raise UsageError(
                f"--resume {resume} is a file; give the run folder (the one holding config.json and episodes.jsonl)"
            )
        if out is not None and out.resolve() != resume.resolve():
            raise UsageError("--resume DIR continues the run in DIR: drop --out, or give the same folder")
        values = {
            "seller": seller,
            "buyer": buyer,
            "suite": suite,
            "seed": seed,
            "limit": limit,
            "shard": shard,
            "seller_base_url": seller_base_url,
            "buyer_base_url": buyer_base_url,
            "concurrency": concurrency,
            "rate_limit": rate_limit,
            "timeout": timeout,
            "retries": retries,
        }
        v = _resume_settings(given, resume, values)
        seller, buyer, suite, seed, limit, shard = (
            v["seller"],
            v["buyer"],
            v["suite"],
            v["seed"],
            v["limit"],
            v["shard"],
        )
        seller_base_url, buyer_base_url = v["seller_base_url"], v["buyer_base_url"]
        concurrency, rate_limit, timeout, retries = v["concurrency"], v["rate_limit"], v["timeout"], v["retries"]
        out = resume
    st = get_suite(suite)
    buyers = list(dict.fromkeys(buyer or st.buyers))
    shard_of = _parse_shard(shard)
    jobs = plan(st, seller, buyers, seed=seed, limit=limit, shard=shard_of)
    planned = len(range(shard_of[0], st.size(len(buyers)), shard_of[1])) if shard_of else st.size(len(buyers))
    if limit is not None and limit > planned:
        part = f"shard {shard} of " if shard else ""
        console.print(
            f"note: --limit {limit} is more than the {planned} negotiations of {part}{st.name} with "
            f"{'this buyer' if len(buyers) == 1 else 'these buyers'}: running all {planned}"
        )
    rate_limits = rate_limit if isinstance(rate_limit, dict) else _parse_rate_limits(rate_limit)
    options = RunOptions(
        concurrency=concurrency,
        seller_base_url=seller_base_url,
        buyer_base_url=buyer_base_url,
        rate_limits=rate_limits,
        call_timeout=timeout,
        retries=retries,
    )
    options.check()
    from evals.workers import resolve_workers

    n_workers = resolve_workers(workers, jobs)
    out_dir = out or Path("runs") / suite / _slug(seller)
    try:
        preflight(seller, seller_base_url)
        for b in buyers:
            preflight(b, buyer_base_url)
    except ProviderError as e:
        raise Unreachable(str(e)) from None
    output_folder(out_dir, "--resume" if resume is not None else "--out")
    rerun = resume is None and (out_dir / "config.json").is_file()
    before = read_config(out_dir).get("limit") if rerun else limit
    pool = training_pool({"seller": seller})
    write_config(
        out_dir,
        {
            "suite": st.key,
            "suite_name": st.name,
            "suite_fingerprint": st.fingerprint(),
            "seller": seller,
            "buyers": buyers,
            "seed": seed,
            "limit": limit,
            "shard": shard,
            "seller_base_url": seller_base_url,
            "buyer_base_url": buyer_base_url,
            "concurrency": concurrency,
            "rate_limits": rate_limits,
            "timeout": timeout,
            "retries": retries,
            "training": pool,
        },
    )
    if before != limit:  # a rerun with another --limit extends (or narrows) the run: say so
        console.print(
            f"note: the run in {out_dir} was planned with --limit {_show(before)}; it now plans {len(jobs)} negotiations"
        )
    for w in family_warnings(seller, buyers, pool):
        console.print(f"[bold yellow]warning:[/] {w}")

    log = EpisodeLog(out_dir / "episodes.jsonl")  # sets damaged lines aside
    if log.set_aside:
        n = len(log.set_aside)
        console.print(
            f"[bold yellow]warning:[/] {log.path} had {n} damaged line{'s' if n > 1 else ''} ({escape(describe(log.set_aside))}); "
            f"moved to {damaged_path(log.path)}, and those negotiations run again"
        )
    already = len({j.episode_id for j in jobs} & episode_ids(log.path))
    if already:
        console.print(f"resuming in {out_dir}: {already} of {len(jobs)} negotiations already done")

    # local/ models: prepared (first use) and served before the bar starts, stopped when the run ends or fails.
    import asyncio
    from contextlib import nullcontext

    from evals.runner import run_jobs
    from evals.summary import row
    from evals.workers import forked

    from ..models.local.servers import local_servers

    def bar() -> Progress:
        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=quiet,
            transient=False,
        )

    # Several processes fork before the bar's thread starts (see evals.workers).
    with (
        local_servers([seller, *buyers], say=console.print),
        forked(jobs, out_dir, options, n_workers) if n_workers > 1 else nullcontext() as play,
        bar() as progress,
    ):
        task = progress.add_task(f"{suite}: {seller}", total=len(jobs), completed=already)
        if play is not None:
            new = play(on_row=lambda r: progress.advance(task))
        else:
            new = [
                row(e)
                for e in asyncio.run(run_jobs(jobs, out_dir, options, on_episode=lambda ep: progress.advance(task)))
            ]

    from evals.report import run_table
    from evals.summary import summarize

    from ..runtime.log import read_episodes

    wanted = {j.episode_id for j in jobs}
    # A fresh run summarises what it just played; reading the log back would parse every
    # episode again (about 1.5 s of CPU for the held-out suite here).
    rows = [r for r in (new if not already else map(row, read_episodes(log.path))) if r.episode_id in wanted]
    summary = summarize(rows)
    summary["suite"] = st.key
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    console.print(run_table(summary, title=f"{seller} on {suite} ({len(rows)} negotiations)"))
    console.print(
        f"episodes: {out_dir / 'episodes.jsonl'}\nsummary:  {out_dir / 'summary.json'}\n"
        f"report:   negotiator report {out_dir} [OTHER_RUN ...]"
    )
    errors = [r.error for r in rows if r.metrics is None]
    if errors:
        console.print(
            f"[bold yellow]{len(errors)} negotiations ended in an error[/] (left out of the scores): {errors[0][1] if errors[0] else ''}"
        )
    if rows and len(errors) == len(rows) and all(e and e[0] == "ProviderError" for e in errors):
        console.print(f"[bold red]every negotiation failed: {errors[0][1]}[/]")
        raise typer.Exit(EXIT_UNREACHABLE)
