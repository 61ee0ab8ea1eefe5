"""``negotiator eval``: measure a seller against buyers it never trained against."""

from __future__ import annotations

import json
import re
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..errors import ProviderError, UsageError
from .app import (
    DEFAULT_SELLER,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_UNREACHABLE,
    Unreachable,
    app,
    command,
    console,
    err_console,
    output_folder,
)

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
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "fallback": "fallbacks",
}
# How a run is carried out, not what it measures: recorded and reused on --resume; a value
# given anew wins (fewer calls per minute after a 429 storm, less concurrency on a smaller box).
TUNABLE = {
    "concurrency": "concurrency",
    "rate_limit": "rate_limits",
    "token_limit": "token_limits",
    "timeout": "timeout",
    "call_retries": "call_retries",
    "retries": "retries",
}


def _parse_shard(shard: str | None) -> tuple[int, int] | None:
    if shard is None:
        return None
    m = re.fullmatch(r"(\d+)/(\d+)", shard.strip())
    if not m:
        raise UsageError(f"--shard {shard!r}: write it as i/n, e.g. 0/4")
    return int(m.group(1)), int(m.group(2))


def _parse_rate_limits(items: list[str] | None, flag: str = "--rate-limit", what: str = "CALLS") -> dict[str, float]:
    out = {}
    example = "openai=500 or hosted_vllm=120" if what == "CALLS" else "openai=200000"
    for item in items or []:
        provider, eq, rpm = item.partition("=")
        try:
            out[provider.strip()] = float(rpm)
        except ValueError:
            eq = ""
        if not eq or not provider.strip():
            raise UsageError(f"{flag} {item!r}: write PROVIDER={what}_PER_MINUTE (or SPEC=...), e.g. {example}")
    return out


def _parse_fallbacks(items: list[str] | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items or []:
        primary, eq, backup = item.partition("=")
        if not eq or not primary.strip() or not backup.strip():
            raise UsageError(
                f"--fallback {item!r}: write PRIMARY=BACKUP, two model specs, e.g. "
                "openai/gpt-4o-mini=anthropic/claude-3-5-haiku-latest"
            )
        out.setdefault(primary.strip(), []).append(backup.strip())
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
    if name == "token_limit":
        return _parse_rate_limits(value, "--token-limit", "TOKENS") if isinstance(value, list) else value or {}
    if name == "fallback":
        return _parse_fallbacks(value) if isinstance(value, list) else value or {}
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
                f"{_flag(name)} {shown} differs from the run in {resume} ({_show(recorded)}); drop it to resume "
                "that run, "
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


class StableETA(ProgressColumn):
    """Time left at this run's own average pace (its elapsed time per negotiation finished so far).

    rich's own column divides by the speed of the last 30 seconds, which jumps when concurrent
    negotiations finish in waves (1 s, then 2:33). Before the first one finishes there is no pace yet.
    """

    def render(self, task: Task) -> Text:
        done = task.completed - task.fields.get("done_before", 0)
        if task.finished:
            return Text("")
        if done <= 0 or not task.elapsed or task.total is None:
            return Text("ETA …", style="progress.remaining")
        left = task.elapsed / done * (task.total - task.completed)
        return Text(f"ETA {_clock(left)}", style="progress.remaining")


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


LEGEND = (
    ("seller score", "the seller's gain over walking away, as a share of its most: 0 = no deal, 1 = its best terms"),
    ("[95% CI]", "of the mean over these negotiations, resampled by scenario"),
    ("deal rate", "the share of negotiations that ended in a deal"),
    ("buyer score", "the same scale for the buyer"),
    ("invalid", "model answers that did not parse or broke the rules (the model was asked again)"),
    (
        "guard",
        "seller moves the guard changed: below the limits, stating a secret, contradicting the offer, saying more than the listing",
    ),
    ("errors", "negotiations that ended in a provider error: left out of the scores"),
)


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
            help="Evaluation buyer spec; repeat for several (the paper uses two, from two model families). "
            "Default: the suite's buyers. rule/persona plays each persona's own tactic; pkg.module:factory or a "
            "registered name plays your own (docs/plugins.md). mcp+http://HOST:PORT/mcp or a2a+http://HOST:PORT: "
            "buyer agents that negotiate with the seller served there, over the protocol (with --buyer-model)."
        ),
    ] = None,
    buyer_model: Annotated[
        list[str] | None,
        typer.Option(
            help="With --buyer mcp+http://... or a2a+http://...: the buyer agent's spec (rule/..., an LLM, your own "
            "party); repeat for several. Default: the suite's buyers."
        ),
    ] = None,
    suite: Annotated[
        str,
        typer.Option(
            help="Evaluation suite: quick (24 negotiations), heldout (48 scenarios x 12 personas x 2 buyers = 1,152), "
            "talk (60 scenarios x 8 talking buyers = 480), adversarial (24 attacks); quick@v2 and heldout@v2 are "
            "their negotiations on generator 2 (the price never above the list price)."
        ),
    ] = "quick",
    limit: Annotated[int | None, typer.Option(help="Run at most N negotiations of the suite.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the buyers' tactics and sampling.")] = 0,
    temperature: Annotated[
        float | None,
        typer.Option(
            help="Sampling temperature of the seller's model (default: the seller's own). Recorded in config.json."
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(help="Most tokens the seller's model writes per answer (default 256). Recorded in config.json."),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Negotiations in flight at once.")] = 8,
    seller_base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM ...).")
    ] = None,
    buyer_base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server for LLM buyers.")
    ] = None,
    rate_limit: Annotated[
        list[str] | None,
        typer.Option(
            help="PROVIDER=CALLS_PER_MINUTE (or SPEC=...), e.g. openai=500; repeatable. LiteLLM's Router counts "
            "them per model."
        ),
    ] = None,
    token_limit: Annotated[
        list[str] | None,
        typer.Option(help="PROVIDER=TOKENS_PER_MINUTE (or SPEC=...), e.g. openai=200000; repeatable."),
    ] = None,
    fallback: Annotated[
        list[str] | None,
        typer.Option(
            help="PRIMARY=BACKUP: when a call to the model PRIMARY still fails, LiteLLM's Router sends it to "
            "BACKUP; repeatable."
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Seconds per model call before it counts as a transient failure (default 120)."),
    ] = None,
    call_retries: Annotated[
        int,
        typer.Option(help="Retries of one model call on a transient provider error (429, 5xx, timeout), with backoff."),
    ] = 3,
    retries: Annotated[
        int,
        typer.Option(
            help="Replays of a negotiation that still failed on a transient provider error (429, 5xx, timeout) "
            "after the per-call retries."
        ),
    ] = 2,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run shard i of n (i/n) of the suite, for several machines; `negotiator report` merges shards."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output folder; rerunning into it resumes. Default: a new folder under runs/ ($NEGOTIATOR_RUNS_DIR) "
            "named for the time, suite, seller and buyers."
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Continue the run in this folder with its recorded settings (after a crash, a kill or Ctrl-C)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    workers: Annotated[
        str,
        typer.Option(
            help="Processes for a rule-vs-rule arm: auto (one per core from 200 negotiations on) or a number. "
            "Arms with model parties run in one process."
        ),
    ] = "auto",
) -> None:
    """Run a seller through an evaluation suite; write episodes.jsonl and summary.json; print a table.

    Each run gets a new folder under runs/ unless --out names one. Every finished negotiation is
    appended to episodes.jsonl at once; `negotiator eval --resume FOLDER` (or the same command
    with --out FOLDER) runs only the missing negotiations. Compare arms with `negotiator report
    runs/`, or watch them live with `negotiator view runs/`.
    """
    from evals.arms import family_warnings, training_pool
    from evals.routing import unused_limits
    from evals.runner import RunOptions, plan, read_config, write_config
    from evals.runs import new_run_folder
    from evals.suites import get_suite

    from ..models.preflight import preflight
    from ..models.specs import check_generation, parse_spec, with_params
    from ..runtime.log import EpisodeLog, damaged_path, describe, episode_ids, failed_path, set_aside_failed

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
            "temperature": temperature,
            "max_tokens": max_tokens,
            "fallback": fallback,
            "concurrency": concurrency,
            "rate_limit": rate_limit,
            "token_limit": token_limit,
            "timeout": timeout,
            "call_retries": call_retries,
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
        temperature, max_tokens, fallback = v["temperature"], v["max_tokens"], v["fallback"]
        concurrency, rate_limit, token_limit = v["concurrency"], v["rate_limit"], v["token_limit"]
        timeout, call_retries, retries = v["timeout"], v["call_retries"], v["retries"]
        out = resume
    check_generation(
        {"temperature": temperature, "max_tokens": max_tokens}, lambda key, v: f"--{key.replace('_', '-')} {v}:"
    )
    generation = {k: v for k, v in (("temperature", temperature), ("max_tokens", max_tokens)) if v is not None}
    if generation and parse_spec(seller).kind in ("litellm", "local", "scripted"):
        # Written into the seller's spec, so the arm's name, its folder, config.json and every episode say what it
        # sampled at (before, `--temperature 2` on the default ran at 2 under the name temperature=0).
        # The spec then holds them: config.json records them there only, so the same settings given
        # in the spec or as flags are one arm, not two (one of them labelled "temperature default").
        seller, generation = with_params(seller, generation), {}
        temperature = max_tokens = None
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
    token_limits = (
        token_limit if isinstance(token_limit, dict) else _parse_rate_limits(token_limit, "--token-limit", "TOKENS")
    )
    fallbacks = fallback if isinstance(fallback, dict) else _parse_fallbacks(fallback)
    options = RunOptions(
        concurrency=concurrency,
        seller_base_url=seller_base_url,
        buyer_base_url=buyer_base_url,
        seller_options=generation,
        rate_limits=rate_limits,
        token_limits=token_limits,
        fallbacks=fallbacks,
        call_timeout=timeout,
        call_retries=call_retries,
        retries=retries,
    )
    options.check()
    from evals.workers import resolve_workers

    n_workers = resolve_workers(workers, jobs)
    out_dir = out or new_run_folder(st.name, seller, buyers)
    try:
        preflight(seller, seller_base_url)
        for b in buyers:
            preflight(b, buyer_base_url)
    except ProviderError as e:
        raise Unreachable(str(e)) from None
    output_folder(out_dir, "--resume" if resume is not None else "--out")
    recorded = read_config(out_dir) if (out_dir / "config.json").is_file() else {}
    rerun = resume is None and bool(recorded)
    before = recorded.get("limit") if rerun else limit
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
            "temperature": temperature,
            "max_tokens": max_tokens,
            "concurrency": concurrency,
            "rate_limits": rate_limits,
            "token_limits": token_limits,
            "fallbacks": fallbacks,
            "timeout": timeout,
            "call_retries": call_retries,
            "retries": retries,
            "training": pool,
            "created": recorded.get("created") or datetime.now().astimezone().isoformat(timespec="seconds"),
        },
    )
    if before != limit:  # a rerun with another --limit extends (or narrows) the run: say so
        console.print(
            f"note: the run in {out_dir} was planned with --limit {_show(before)}; it now plans {len(jobs)} "
            "negotiations",
            soft_wrap=True,
        )
    for w in family_warnings(seller, buyers, pool):
        console.print(f"[bold yellow]warning:[/] {w}", soft_wrap=True)  # one line each, in a log too
    for key in unused_limits([seller, *buyers], rate_limits, token_limits):
        console.print(
            f"[bold yellow]warning:[/] the limit on {key} limits nothing in this run: rate and token limits apply to "
            "LiteLLM models (openai/..., anthropic/..., hosted_vllm/...), which LiteLLM's Router calls",
            soft_wrap=True,
        )
    if (temperature is not None or max_tokens is not None) and parse_spec(seller).kind not in (
        "litellm",
        "local",
        "scripted",
    ):
        flags = [k for k, v in (("temperature", temperature), ("max_tokens", max_tokens)) if v is not None]
        console.print(
            f"note: {', '.join(_flag(k) for k in flags)} set the seller's model; {seller} calls no model, "
            "so they change nothing here (they are recorded all the same)",
            soft_wrap=True,
        )

    log = EpisodeLog(out_dir / "episodes.jsonl")  # sets damaged lines aside
    if log.set_aside:
        n = len(log.set_aside)
        console.print(
            f"[bold yellow]warning:[/] {log.path} had {n} damaged line{'s' if n > 1 else ''} "
            f"({escape(describe(log.set_aside))}); "
            f"moved to {damaged_path(log.path)}, and those negotiations run again",
            soft_wrap=True,
        )
    wanted = {j.episode_id for j in jobs}
    n = set_aside_failed(log.path, wanted)  # an error is no result: a resume plays those negotiations again
    if n:
        console.print(
            f"playing again {n} negotiation{'s' if n > 1 else ''} that ended in an error "
            f"(the failed episode{'s' if n > 1 else ''} kept in {failed_path(log.path)})",
            highlight=False,
            soft_wrap=True,
        )
    already = len(wanted & episode_ids(log.path))
    if already:
        console.print(f"resuming in {out_dir}: {already} of {len(jobs)} negotiations already done")
    else:
        console.print(f"run folder: {out_dir}")

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
            StableETA(),
            console=console,
            disable=quiet,
            transient=False,
        )

    try:
        # Several processes fork before the bar's thread starts (see evals.workers).
        with (
            local_servers([seller, *buyers], say=console.print),
            forked(jobs, out_dir, options, n_workers) if n_workers > 1 else nullcontext() as play,
            bar() as progress,
        ):
            task = progress.add_task(f"{suite}: {seller}", total=len(jobs), completed=already, done_before=already)
            if play is not None:
                new = play(on_row=lambda r: progress.advance(task))
            else:
                new = [
                    row(e)
                    for e in asyncio.run(run_jobs(jobs, out_dir, options, on_episode=lambda ep: progress.advance(task)))
                ]
    except KeyboardInterrupt:
        kept = len(wanted & episode_ids(log.path))  # every finished negotiation is on disk before it counts
        err_console.print(
            f"interrupted: kept {kept} of {len(jobs)} negotiations in {out_dir}; "
            f"resume with `{command()} eval --resume {out_dir}`",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_INTERRUPTED)  # not typer.Exit: main would add a second interrupted line

    from evals.report import run_table
    from evals.summary import summarize

    from ..runtime.log import read_episodes

    # A fresh run summarises what it just played; reading the log back would parse every
    # episode again (about 1.5 s of CPU for the held-out suite here).
    rows = [r for r in (new if not already else map(row, read_episodes(log.path))) if r.episode_id in wanted]
    summary = summarize(rows)
    summary["suite"] = st.key
    reference = _reference(out_dir, read_config(out_dir), rows, {j.episode_id: j.labels["negotiation"] for j in jobs})
    if reference is not None:
        summary["reference"] = {k: v for k, v in reference.items() if k != "line"}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    console.print(run_table(summary, title=f"{seller} on {suite} ({len(rows)} negotiations)", reference=reference))
    me = command()  # how the commands printed below to copy begin
    width = max(len(name) for name, _ in LEGEND)
    for name, meaning in LEGEND:
        console.print(f"[dim]{name:<{width}}  {meaning}[/]", highlight=False)
    if reference is not None:
        console.print(reference["line"], markup=False, highlight=False, soft_wrap=True)
    elif not seller.startswith("rule/"):
        rule = ["eval", "--seller", "rule/boulware", "--suite", suite]
        for b in buyers if buyer else []:
            rule += ["--buyer", b]
        if buyer and buyer_base_url:
            rule += ["--buyer-base-url", buyer_base_url]  # buyers behind a proxy
        rule += ["--seed", str(seed)] if seed else []
        rule += ["--out", str(out_dir.parent / "rule_boulware")] if out else []
        console.print(
            f"for a point of comparison, run a rule seller on the same negotiations (seconds, no model): "
            f"{me} {shlex.join(rule)}; this summary then shows it beside the next run",
            markup=False,  # a spec's [ or a folder's is the command's, not rich's
            highlight=False,
            soft_wrap=True,
        )
    run, runs = shlex.quote(str(out_dir)), shlex.quote(str(out_dir.parent))
    console.print(
        f"episodes: {out_dir / 'episodes.jsonl'}\nsummary:  {out_dir / 'summary.json'}\n"
        f"report:   {me} report {run}\n"
        f"compare:  {me} report {runs}   (every run in it, on the negotiations they share)\n"
        f"watch:    {me} view {runs}",
        markup=False,
        highlight=False,
        soft_wrap=True,  # paths and commands whole, to copy
    )
    errors = [r.error for r in rows if r.metrics is None]
    first = errors[0] if errors else None
    said = escape(first[1]) if first else ""
    if errors:
        console.print(
            f"[bold yellow]{len(errors)} negotiation{'s' if len(errors) > 1 else ''} ended in an error[/] "
            f"(left out of the scores): {said}; "
            f"`{escape(me)} eval --resume {escape(run)}` plays them again",
            soft_wrap=True,
        )
    overall = summary["overall"]
    if overall.get("buyer_fallbacks"):
        console.print(
            f"[yellow]the buyers' models gave {overall['buyer_invalid_actions']} unusable answers; "
            f"{overall['buyer_fallbacks']} buyer turns repeated the buyer's last offer because its model could not "
            'decide[/]: scores against those buyers partly measure that fallback (`"fallback": true` on those turns '
            "in episodes.jsonl)",
            soft_wrap=True,
        )
    elif overall.get("buyer_invalid_actions"):  # each asked again until usable: the buyers' own moves were scored
        console.print(
            f"the buyers' models gave {overall['buyer_invalid_actions']} unusable answers, each asked again until "
            "usable: no buyer turn fell back",
            soft_wrap=True,
        )
    if rows and len(errors) == len(rows):  # nothing scored: a script must not read it as a run that worked
        console.print(f"[bold red]every negotiation failed: {said}[/]")
        raise typer.Exit(EXIT_UNREACHABLE if all(e and e[0] == "ProviderError" for e in errors) else EXIT_FAILURE)


def _reference(out_dir: Path, config: dict, rows: list, negotiations: dict[str, str]) -> dict | None:
    """Another seller's run in the same folder, on the same negotiations: a point of comparison for the
    score (a rule seller first, else the latest run); None when there is none."""
    from evals.reference import reference_for

    try:
        return reference_for(out_dir, config, rows, negotiations)
    except UsageError:  # a neighbour of another schema version is not this run's problem
        return None
