"""A learning-rate sweep: one arm per rate, then the held-out comparison with the base.

The paper's lesson as one command: tune the learning rate before concluding a small model
cannot learn. Each arm trains into ``OUT/lr<rate>/``; then the base and every arm play the
evaluation suite through ``negotiator eval`` (``OUT/eval/<arm>/``), and ``negotiator
report`` compares them on identical negotiations (``OUT/report/``). The evaluation runs as
its own processes, exactly as a user would run it, after training has released its memory.
Every stage resumes: rerun the same command to continue after an interruption.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from negotiator.agent.seller import strategy_params
from negotiator.errors import SweepFailed

from .config import TrainConfig
from .run import train


def sweep(
    configs: list[TrainConfig], out: Path, *, eval_suite: str, eval_limit: int | None, console, progress: bool
) -> dict:
    arms = {}
    for cfg in configs:
        console.print(f"[bold]arm lr={cfg.lr:g}[/] -> {cfg.out}")
        manifest = train(cfg, console=console, progress=progress)
        arms[f"lr{cfg.lr:g}"] = (f"local/{cfg.out / 'merged'}", manifest)
        gc.collect()
    base = configs[0].base
    sellers = {"base": base if base.startswith("local/") or "/" in base else f"local/{base}"}
    sellers.update({name: spec for name, (spec, _) in arms.items()})
    # Every arm and the base are evaluated as the seller they were trained as (pure or assisted).
    strategy = strategy_params(configs[0].strategy)
    sellers = {name: f"{spec}{'&' if '?' in spec else '?'}{strategy}" for name, spec in sellers.items()}
    run_dirs = []
    for name, seller in sellers.items():
        run_dir = out / "eval" / name
        cmd = [
            sys.executable,
            "-m",
            "negotiator",
            "eval",
            "--seller",
            seller,
            "--suite",
            eval_suite,
            "--out",
            str(run_dir),
        ]
        if eval_limit:
            cmd += ["--limit", str(eval_limit)]
        if not progress:
            cmd.append("--quiet")
        console.print(f"[bold]evaluating {name}[/]: {' '.join(cmd[2:])}")
        _run(cmd)
        run_dirs.append(run_dir)
    report_dir = out / "report"
    _run([sys.executable, "-m", "negotiator", "report", *map(str, run_dirs), "--out", str(report_dir)])
    return {"arms": {k: m for k, (_, m) in arms.items()}, "eval": [str(d) for d in run_dirs], "report": str(report_dir)}


def _run(cmd: list[str]) -> None:
    rc = subprocess.call(cmd)
    if rc != 0:
        raise SweepFailed(
            f"`{' '.join(cmd[2:])}` exited with code {rc}; fix the cause and rerun the same command to resume"
        )
