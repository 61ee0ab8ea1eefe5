"""The evaluation runner: many negotiations at once, each logged the moment it ends.

Episode ids are deterministic (suite, scenario, buyer, seller, seed), so rerunning into
the same folder runs only what is missing: after a crash or a kill no episode is lost or
duplicated. Every job ends as an episode, errors included.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from negotiator.domain.scenario import Scenario
from negotiator.errors import UsageError
from negotiator.runtime import EpisodeLog, episode_id, episode_ids, make_party, run_negotiation
from negotiator.runtime.episode import Episode

from .suites import Suite


@dataclass(frozen=True)
class Job:
    episode_id: str
    scenario: Scenario
    seller: str
    buyer: str
    seed: int
    labels: dict = field(default_factory=dict, hash=False, compare=False)


def plan(
    suite: Suite,
    seller: str,
    buyers: list[str] | None = None,
    *,
    seed: int = 0,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
) -> list[Job]:
    """The jobs of ``suite`` for one seller arm, in a stable order."""
    buyers = list(buyers or suite.buyers)
    if not buyers:
        raise UsageError(f"suite {suite.name} defines no default buyers; pass --buyer")
    jobs = []
    for scenario in suite.scenarios():
        for buyer in buyers:
            for persona in suite.personas:
                eid = episode_id(suite.key, scenario.id, persona, buyer, seller, seed)
                labels = {"suite": suite.name, "suite_version": suite.version, "persona": persona}
                jobs.append(Job(eid, scenario, seller, buyer, seed, labels))
    if shard is not None:
        i, n = shard
        if not (n >= 1 and 0 <= i < n):
            raise UsageError(f"--shard {i}/{n}: write i/n with 0 <= i < n")
        jobs = [j for k, j in enumerate(jobs) if k % n == i]
    if limit is not None:
        if limit < 1:
            raise UsageError("--limit must be at least 1")
        jobs = jobs[:limit]
    return jobs


@dataclass
class RunOptions:
    concurrency: int = 8
    seller_base_url: str | None = None
    buyer_base_url: str | None = None
    seller_options: dict = field(default_factory=dict)
    buyer_options: dict = field(default_factory=dict)


async def run_jobs(
    jobs: list[Job],
    out_dir: str | Path,
    options: RunOptions | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Run every job not yet in ``out_dir/episodes.jsonl``; return the new episodes."""
    options = options or RunOptions()
    if options.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = EpisodeLog(out / "episodes.jsonl")
    done = episode_ids(log.path)
    todo = [j for j in jobs if j.episode_id not in done]
    sem = asyncio.Semaphore(options.concurrency)
    results: list[Episode] = []

    async def one(job: Job) -> None:
        async with sem:
            seller = make_party(job.seller, "seller", seed=job.seed, base_url=options.seller_base_url, **options.seller_options)
            buyer = make_party(job.buyer, "buyer", seed=job.seed, base_url=options.buyer_base_url, **options.buyer_options)
            try:
                ep = await run_negotiation(seller, buyer, job.scenario, job.seed, episode_id_=job.episode_id, labels=job.labels)
            finally:
                await seller.aclose()
                await buyer.aclose()
            log.append(ep)
            results.append(ep)
            if on_episode:
                on_episode(ep)

    tasks = [asyncio.create_task(one(j)) for j in todo]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return results


def write_config(out_dir: str | Path, config: dict) -> None:
    """Record the resolved run configuration beside the episodes (refuses to mix runs)."""
    path = Path(out_dir) / "config.json"
    if path.exists():
        old = json.loads(path.read_text())
        keys = ("suite", "seller", "buyers", "seed")
        if any(old.get(k) != config.get(k) for k in keys):
            diff = {k: (old.get(k), config.get(k)) for k in keys if old.get(k) != config.get(k)}
            raise UsageError(
                f"{out_dir} already holds a different run ({diff}); choose a new --out folder, "
                "or rerun with the same settings to resume"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2, sort_keys=True))
