"""Rule-vs-rule negotiations in several processes.

A rule party's moves are pure Python work (the strategy's bidding and opponent model), so
one process keeps one core busy however many negotiations are in flight. An arm whose
seller and buyers are all rule parties is therefore split over worker processes, forked
from this one so that they start at once and share the plan and its caches. Each worker
plays chunks of the jobs one negotiation after another and sends back, per episode, its
log line and its summary row; this process appends the lines (one fsync per chunk) and
keeps the rows. Every negotiation is seeded by its job, so the episodes are the ones a
single process plays; only their order in the log differs.

Parties that call models (local, LiteLLM, remote agents) stay in one process: their time
goes to the model server or provider, which ``--concurrency`` overlaps.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from negotiator.errors import UsageError
from negotiator.models.specs import parse_spec
from negotiator.runtime import EpisodeLog

from .runner import Job, RunOptions, batch_gc, run_job, todo_jobs
from .summary import Row, row

AUTO_MIN_JOBS = 200
"""Fewer negotiations than this run in one process under ``workers="auto"``: forking and
collecting cost more than they save on a small run (a one-negotiation eval starts in about a
second; the held-out suite's 1,152 take several)."""


def rule_only(jobs: list[Job]) -> bool:
    """Whether every party of every job is a rule party (CPU work in this process)."""
    return all(parse_spec(spec).kind == "rule" for spec in {s for j in jobs for s in (j.seller, j.buyer)})


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int | str | None, jobs: list[Job]) -> int:
    """How many processes play ``jobs``: ``auto`` (or None) is one per core for a rule-only
    arm of at least ``AUTO_MIN_JOBS`` negotiations, else 1; a number is checked."""
    forks = "fork" in multiprocessing.get_all_start_methods()  # not on Windows
    if workers in (None, "auto"):
        return min(cores(), 8) if forks and len(jobs) >= AUTO_MIN_JOBS and rule_only(jobs) else 1
    try:
        n = int(workers)
    except ValueError:
        raise UsageError(f"--workers {workers}: give a number of processes, or auto") from None
    if n < 1:
        raise UsageError("--workers must be at least 1 (or auto)")
    if n > 1 and not forks:
        raise UsageError(f"--workers {n}: this platform cannot fork processes; use --workers 1")
    if n > 1 and not rule_only(jobs):
        raise UsageError(
            f"--workers {n}: only rule-vs-rule arms run in several processes; an arm with model parties "
            "overlaps its model calls in one process (use --concurrency)"
        )
    return n


_WORK: tuple[list[Job], RunOptions] | None = None  # set before the fork: the workers inherit it


def _ignore_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: this one stops the workers
    (``Pool.terminate``), and they leave no traceback of their own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _play_chunk(bounds: tuple[int, int]) -> list[tuple[str, Row]]:
    jobs, options = _WORK  # type: ignore[misc]

    async def play() -> list[tuple[str, Row]]:
        out = []
        for job in jobs[bounds[0] : bounds[1]]:
            ep = await run_job(job, options)
            out.append((ep.model_dump_json(), row(ep)))
        return out

    with batch_gc():
        result = asyncio.run(play())
    from negotiator.tracing import flush_tracing

    flush_tracing()  # a worker ends without atexit hooks: its spans leave now
    return result


@contextmanager
def forked(jobs: list[Job], out_dir: str | Path, options: RunOptions, workers: int) -> Iterator[Callable]:
    """Fork ``workers`` processes for the jobs not yet in ``out_dir``; yields ``run(on_row)``,
    which plays them and returns their rows. Fork before starting threads (a progress bar):
    a thread's lock held at the fork would stay held in the child."""
    global _WORK
    log = EpisodeLog(Path(out_dir) / "episodes.jsonl")
    todo = todo_jobs(jobs, log)
    size = max(1, math.ceil(len(todo) / (workers * 8)))  # several chunks per worker: they even out
    chunks = [(i, min(i + size, len(todo))) for i in range(0, len(todo), size)]
    _WORK = (todo, options)
    pool = multiprocessing.get_context("fork").Pool(workers, _ignore_interrupts) if todo else None
    try:

        def run(on_row: Callable[[Row], None] | None = None) -> list[Row]:
            rows: list[Row] = []
            for result in pool.imap_unordered(_play_chunk, chunks) if pool else ():
                log.append_lines([line for line, _ in result])  # on disk before they count as done
                for _, r in result:
                    rows.append(r)
                    if on_row:
                        on_row(r)
            return rows

        yield run
    finally:
        _WORK = None
        if pool is not None:
            pool.terminate()
            pool.join()
