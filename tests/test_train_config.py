"""Training defaults: the cpu profile trains as the run that beat the base here did; gpu keeps the paper's rate."""

from __future__ import annotations

import typer.main

from negotiator.cli.app import _register, app
from train.config import resolve


def _train_params(*args: str) -> dict:
    _register()
    command = typer.main.get_command(app).commands["train"]
    return command.make_context("train", ["--out", "runs/x", *args]).params


def test_the_cpu_profile_uses_the_rate_and_length_that_moved_the_270m(tmp_path):
    cfg = resolve("cpu", out=tmp_path)
    assert cfg.lr == 6e-4 and cfg.max_rounds is None  # docs/results.md, attempt 7: --lr 6e-4 --max-rounds 0
    assert resolve("cpu", out=tmp_path, max_rounds=4).max_rounds == 4  # a cap is still a choice


def test_the_gpu_profile_keeps_the_papers_rate(tmp_path):
    assert resolve("gpu", out=tmp_path).lr == 3e-6


def test_the_cli_lr_defaults_to_the_profile(tmp_path):
    assert _train_params()["lr"] is None  # None reaches resolve(), which takes the profile's rate
    assert resolve("cpu", out=tmp_path, lr=None).lr == 6e-4
    assert _train_params("--lr", "1e-3,2e-3")["lr"] == "1e-3,2e-3"
