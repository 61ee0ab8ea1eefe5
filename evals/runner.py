"""The evaluation runner: many negotiations at once, each logged the moment it ends.

* **Deterministic ids.** An episode id hashes (suite, scenario, persona, buyer, seller,
  seed), so rerunning into the same folder runs only what is missing: after a crash or a
  kill no episode is lost or duplicated. ``labels["negotiation"]`` hashes the same without
  the seller: two arms' episodes with the same value played the identical negotiation.
* **Failures are data.** Every job ends as exactly one episode. Each model call is retried on
  transient provider errors (429, 5xx, timeouts): by LiteLLM's Router for LiteLLM parties
  (``evals.routing``, which also does the rate limits and fallbacks), by the agent for the
  others. An episode that still ends in a transient error is played again from the start after
  a backoff, up to ``retries`` times, and recorded as an error episode if it keeps failing: the
  Router retries one call, and a negotiation is a dialogue of many, so this replay stays here.
* **Provider limits.** ``rate_limits`` and ``token_limits`` (per provider prefix or whole spec)
  become the Router's per-deployment RPM and TPM. ``call_timeout`` bounds each model call.
* **Cheap per job.** A fixed pool of ``concurrency`` workers pulls jobs; parties are built
  per job (they are cheap, and per-job state keeps every negotiation reproducible). Two
  measured costs are kept off the negotiations (``benchmarks/eval_scale.py``): episodes
  are appended in batches with one fsync each, in a thread, and the garbage collector
  leaves the long-lived objects (scenarios, caches, the compiled graph) alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import math
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from negotiator.buyers.adversarial import AdversarialBuyer, is_attack
from negotiator.buyers.personas import NEUTRAL, get_persona
from negotiator.buyers.rules import RuleParty
from negotiator.domain.scenario import Scenario
from negotiator.errors import UsageError
from negotiator.models.specs import parse_spec
from negotiator.party import Party
from negotiator.runtime import EpisodeLog, episode_id, episode_ids, make_party, run_negotiation
from negotiator.runtime.episode import Episode
from negotiator.runtime.log import set_aside_failed

from .routing import Routes, build_routes, provider
from .suites import Suite

__all__ = ["Job", "RunOptions", "plan", "provider", "run_job", "run_jobs"]


@dataclass(frozen=True)
class Job:
    episode_id: str
    scenario: Scenario  # as the buyer's persona plays it
    seller: str
    buyer: str
    seed: int
    labels: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def persona(self) -> str:
        return self.labels.get("persona", NEUTRAL.name)


def negotiation_id(suite_key: str, scenario_id: str, persona: str, buyer: str, seed: int) -> str:
    """What two arms share when they played the identical negotiation (no seller in it)."""
    return episode_id(suite_key, scenario_id, persona, buyer, seed)


def check_spec(spec: str, role: str) -> None:
    """Fail early, before any negotiation runs, on a spec that cannot work."""
    try:
        _check_spec(spec, role)
    except UsageError as e:
        from negotiator.plugins import with_reserved_hint

        raise with_reserved_hint(e, spec) from None


def _check_spec(spec: str, role: str) -> None:
    s = parse_spec(spec)
    if s.kind == "rule" and s.name == "persona" and role == "buyer":
        if s.params:
            raise UsageError(f"{spec}: rule/persona takes no parameters; it plays each persona's own tactic")
    elif s.kind == "rule":
        RuleParty(s.name, role, params=s.params, spec=s.raw)  # type: ignore[arg-type]
    elif s.kind == "human":
        raise UsageError(f"a human {role} is only available in `negotiator play`")
    elif s.kind in ("mcp", "a2a"):
        from negotiator.remote import check_remote_spec

        check_remote_spec(spec, role)
    elif s.kind == "plugin":  # import the factory and build one party now: a broken plugin stops the run here
        from negotiator.plugins import make_plugin_party

        _close_quietly(make_plugin_party(s.raw, s.name, s.params, role))
    else:  # a model party: its settings (?menu=, ?temperature=, unknown keys) checked before any model starts
        if s.kind == "litellm":
            from negotiator.models.preflight import check_provider

            check_provider(s)
        from negotiator.runtime.parties import make_party

        _close_quietly(make_party(spec, role))  # type: ignore[arg-type]


def _close_quietly(party: Party) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(party.aclose())
    # inside a running event loop (a notebook, an async caller) the pre-flight party is left to the collector


def plan(
    suite: Suite,
    seller: str,
    buyers: list[str] | None = None,
    *,
    seed: int = 0,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
) -> list[Job]:
    """The jobs of ``suite`` for one seller arm, in a stable order (scenario, buyer, persona)."""
    buyers = list(dict.fromkeys(buyers or suite.buyers))
    if not buyers:
        raise UsageError(f"suite {suite.name} defines no default buyers; pass --buyer")
    if shard is not None:
        i, n = shard
        if not (n >= 1 and 0 <= i < n):
            raise UsageError(f"--shard {i}/{n}: write i/n with 0 <= i < n")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    check_spec(seller, "seller")
    for b in buyers:
        check_spec(b, "buyer")
    # Which negotiations, in a stable order; persona scenarios are built only for the jobs kept.
    slots = [(base, buyer, persona) for base in suite.scenarios() for buyer in buyers for persona in suite.personas]
    if shard is not None:
        i, n = shard
        slots = [x for k, x in enumerate(slots) if k % n == i]
    if limit is not None:
        slots = slots[:limit]
    jobs = []
    for base, buyer, persona in slots:
        labels = {
            "suite": suite.name,
            "suite_version": suite.version,
            "scenario": base.id,
            "persona": persona,
            "buyer": buyer,
            "negotiation": negotiation_id(suite.key, base.id, persona, buyer, seed),
        }
        eid = episode_id(suite.key, base.id, persona, buyer, seller, seed)
        jobs.append(Job(eid, suite.negotiation(base, persona), seller, buyer, seed, labels))
    return jobs


@dataclass
class RunOptions:
    concurrency: int = 8
    seller_base_url: str | None = None
    buyer_base_url: str | None = None
    seller_options: dict = field(default_factory=dict)
    buyer_options: dict = field(default_factory=dict)
    rate_limits: dict[str, float] = field(default_factory=dict)  # provider or spec -> model calls per minute
    token_limits: dict[str, float] = field(default_factory=dict)  # provider or spec -> tokens per minute
    fallbacks: dict[str, list[str]] = field(default_factory=dict)  # spec -> the specs the Router tries next
    call_timeout: float | None = None  # seconds per model call; None keeps the default (120 s)
    call_retries: int = 3  # retries of one model call on a transient failure
    retries: int = 2  # replays of an episode that ended in a transient provider error
    retry_delay: float = 2.0  # first backoff before a replay, doubled each time (max 60 s)

    def check(self) -> None:
        if self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        if self.retries < 0:
            raise UsageError("--retries must be 0 or more")
        if self.call_retries < 0:
            raise UsageError("--call-retries must be 0 or more")
        if self.call_timeout is not None and not (math.isfinite(self.call_timeout) and self.call_timeout > 0):
            raise UsageError("--timeout must be a positive number of seconds")
        for flag, limits, what in (
            ("--rate-limit", self.rate_limits, "calls"),
            ("--token-limit", self.token_limits, "tokens"),
        ):
            for key, value in limits.items():
                if not (value > 0 and math.isfinite(value)):
                    raise UsageError(f"{flag} {key}={value}: give a positive number of {what} per minute")


def _party_options(
    base: dict, call_timeout: float | None, routes: Routes | None = None, role: str = "", spec: str = ""
) -> dict:
    out = dict(base)
    wrap = routes.wrap(role, spec) if routes is not None else None
    if wrap is not None:  # the Router retries each call and bounds it: the agent only waits for it
        from negotiator.llm.graph import RetryPolicy  # LLM parties only: rule-only runs never load LangGraph

        out["retry"] = dataclasses.replace(base.get("retry") or RetryPolicy(), max_retries=0, timeout=None)
        out["wrap_model"] = wrap
    elif call_timeout is not None:
        from negotiator.llm.graph import RetryPolicy

        out["retry"] = dataclasses.replace(base.get("retry") or RetryPolicy(), timeout=call_timeout)
    return out


def make_buyer(job: Job, options: RunOptions, routes: Routes | None = None) -> Party:
    """The buyer of ``job``: its spec, playing the job's persona."""
    persona = get_persona(job.persona)
    s = parse_spec(job.buyer)
    if s.kind == "rule" and s.name == "persona" and is_attack(persona.name):
        party: Party = AdversarialBuyer(persona.name, seed=job.seed, spec=job.buyer)  # the adversarial suite
    elif s.kind == "rule" and s.name == "persona":
        tactic = parse_spec(persona.rule_spec)
        party = RuleParty(tactic.name, "buyer", params=tactic.params, seed=job.seed, spec=job.buyer)
    else:
        party = make_party(
            job.buyer,
            "buyer",
            seed=job.seed,
            base_url=options.buyer_base_url,
            instructions=persona.style,
            **_party_options(options.buyer_options, options.call_timeout, routes, "buyer", job.buyer),
        )
    return party


async def _play(job: Job, options: RunOptions, routes: Routes | None) -> Episode:
    buyer = make_buyer(job, options, routes)
    if parse_spec(job.seller).kind in (
        "mcp",
        "a2a",
    ):  # a seller served elsewhere: the buyer's moves go over the protocol
        from negotiator.remote import remote_parties

        seller, buyer = remote_parties(job.seller, buyer, job.scenario)
    else:
        seller = make_party(
            job.seller,
            "seller",
            seed=job.seed,
            base_url=options.seller_base_url,
            **_party_options(options.seller_options, options.call_timeout, routes, "seller", job.seller),
        )
    try:
        return await run_negotiation(
            seller, buyer, job.scenario, job.seed, episode_id_=job.episode_id, labels=job.labels, persona=job.persona
        )
    finally:
        await seller.aclose()
        await buyer.aclose()


async def run_job(job: Job, options: RunOptions, routes: Routes | None = None) -> Episode:
    """Play one job to an episode, replaying it after a transient provider failure."""
    rng = random.Random(job.episode_id)
    attempt = 0
    while True:
        attempt += 1
        ep = await _play(job, options, routes)
        if ep.error is None or not ep.error.transient or attempt > options.retries:
            break
        delay = min(60.0, options.retry_delay * 2 ** (attempt - 1)) * (0.5 + rng.random() / 2)
        await asyncio.sleep(delay)
    if attempt > 1:
        ep.labels["attempts"] = attempt
    return ep


async def run_jobs(
    jobs: list[Job],
    out_dir: str | Path,
    options: RunOptions | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Run every job without a result in ``out_dir/episodes.jsonl``; return the new episodes. A job
    whose episode ended in an error is played again (the failed episode moves to
    ``episodes.failed.jsonl``), as ``negotiator eval --resume`` does."""
    options = options or RunOptions()
    options.check()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = EpisodeLog(out / "episodes.jsonl")
    set_aside_failed(log.path, {j.episode_id for j in jobs})  # an error is no result (the CLI says how many)
    todo = todo_jobs(jobs, log)
    routes = routes_for(todo, options)
    results: list[Episode] = []
    pending = iter(todo)  # shared by the workers: each job is taken exactly once

    writer = _GroupWriter(log)

    async def worker(i: int) -> None:
        await asyncio.sleep(i * WORKER_STAGGER_S)
        for job in pending:
            ep = await run_job(job, options, routes)
            await writer.append(ep)  # on disk before the job counts as done: a kill loses nothing finished
            results.append(ep)
            if on_episode:
                on_episode(ep)

    with batch_gc():
        k = min(options.concurrency, len(todo))
        workers = [asyncio.create_task(worker(i)) for i in range(k)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            if routes is not None:
                await routes.aclose()
    return results


def routes_for(jobs: list[Job], options: RunOptions) -> Routes | None:
    """The Router of these jobs' LiteLLM parties (None when they have none)."""
    parties = list(
        dict.fromkeys(
            [("seller", j.seller, options.seller_base_url) for j in jobs]
            + [("buyer", j.buyer, options.buyer_base_url) for j in jobs]
        )
    )
    return build_routes(
        parties,
        rate_limits=options.rate_limits,
        token_limits=options.token_limits,
        fallbacks=options.fallbacks,
        call_retries=options.call_retries,
        call_timeout=options.call_timeout,
    )


def todo_jobs(jobs: list[Job], log: EpisodeLog) -> list[Job]:
    """The jobs not yet in ``log``, each once, longest negotiations first: the batch then ends
    on short ones instead of waiting for a long one that started last (stable, so the suite
    order holds among equals)."""
    done = episode_ids(log.path)
    todo = list({j.episode_id: j for j in jobs if j.episode_id not in done}.values())
    todo.sort(key=lambda j: -j.scenario.max_turns)
    return todo


class _GroupWriter:
    """Appends finished episodes to the log, one fsync per batch (group commit).

    An fsync takes from 0.2 to several milliseconds here; one per episode, serialised, capped a
    zero-latency batch at a few hundred episodes a second and blocked the event loop. Episodes
    that finish while a batch is being written go together in the next one, in a thread.
    """

    def __init__(self, log: EpisodeLog):
        self.log = log
        self.pending: list[tuple[Episode, asyncio.Future]] = []
        self.task: asyncio.Task | None = None

    async def append(self, ep: Episode) -> None:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((ep, done))
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._drain())
        await done

    async def _drain(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, []
            try:
                await asyncio.to_thread(self.log.append_many, [ep for ep, _ in batch])
            except asyncio.CancelledError:
                for _, done in batch:
                    done.cancel()
                raise
            except Exception as e:  # disk full, ...: every waiting worker sees it
                for _, done in batch:
                    if not done.done():
                        done.set_exception(e)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)


@contextmanager
def batch_gc() -> Iterator[None]:
    """Collect garbage less often, and never scan what existed before the batch.

    Dozens of negotiations in flight make many short-lived objects next to many long-lived
    ones; with the default settings the collector kept rescanning the long-lived ones and
    cost about a fifth of the CPU time of a scripted-model batch at concurrency 64.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, 50, 50)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


WORKER_STAGGER_S = 0.01
"""Worker i starts i x 10 ms late (64 workers over 0.64 s): a provider sees no burst of
``concurrency`` simultaneous first requests, and calls of similar latency do not keep
finishing together (in lockstep, each burst of completions waited behind the CPU work of
the others)."""


RUN_KEYS = ("suite", "seller", "buyers", "seed", "temperature", "max_tokens")
"""What defines a run (an arm): a folder holds one, and shards of one arm merge in reports. A run
recorded before a key existed reads it as None, the default it ran with."""

FOLDER_KEYS = (*RUN_KEYS, "shard", "seller_base_url", "buyer_base_url", "fallbacks")
"""What a rerun into a folder must repeat: the arm, which shard of it, and where its models are
reached (the negotiations still to run must go to the same endpoints as the ones logged)."""

_FLAGS = {
    "suite": "--suite",
    "seller": "--seller",
    "buyers": "--buyer",
    "seed": "--seed",
    "shard": "--shard",
    "seller_base_url": "--seller-base-url",
    "buyer_base_url": "--buyer-base-url",
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "fallbacks": "--fallback",
}


def write_config(out_dir: str | Path, config: dict) -> None:
    """Record the resolved run configuration beside the episodes (refuses to mix runs)."""
    path = Path(out_dir) / "config.json"
    if path.exists():
        old = read_config(out_dir)
        diff = [k for k in FOLDER_KEYS if _unset(old.get(k)) != _unset(config.get(k))]
        if diff:
            said = "; ".join(f"{_FLAGS[k]} was {_shown(old.get(k))}, now {_shown(config.get(k))}" for k in diff)
            raise UsageError(
                f"{out_dir} already holds a different run ({said}); choose a new --out folder, "
                f"or rerun with the same settings (or `negotiator eval --resume {out_dir}`) to resume it"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".config.json.tmp")
    tmp.write_text(json.dumps(config, indent=2, sort_keys=True))
    tmp.replace(path)  # a kill mid-write never leaves a half-written config.json


def _unset(value):
    """No fallbacks recorded as {} or not at all (a run before the key existed) read the same."""
    return None if value == {} else value


def _shown(value) -> str:
    if value is None:
        return "not set"
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def read_config(run_dir: str | Path) -> dict:
    """The run configuration recorded in ``run_dir``; a UsageError saying what to do when it is missing or damaged."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UsageError(f"no config.json in {run_dir}: pass a folder written by `negotiator eval --out`")
    try:
        config = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        where = (
            f" (line {e.lineno}, column {e.colno}: {e.msg})"
            if isinstance(e, json.JSONDecodeError)
            else " (not UTF-8 text)"
        )
        raise UsageError(
            f"{path} is damaged{where}. Restore it from a copy, or rerun the original `negotiator eval` command with "
            f"--out {run_dir} after deleting config.json: the negotiations already in episodes.jsonl are kept"
        ) from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if not isinstance(config, dict):
        raise UsageError(
            f"{path} is not a run configuration (a JSON object); restore it, or delete it and rerun the original "
            f"command into {run_dir}"
        )
    return config
