"""benchmarks/gpu_check.sh, the prepared GPU check, as a CPU can run it: ``--dry-run``.

The dry run takes every stage's code path that does not need CUDA (the tiny model's
decoder and GRPO step, the 270M-shaped model built, saved, read back and decoding), so
what first runs on a GPU host has run here. A failing stage must give a FAIL line and a
non-zero exit; a missing package a SKIP line that names it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"


def _module(monkeypatch):
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_check", module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _run(*args: str, **env: str) -> tuple[int, dict[str, str], str]:
    """Exit status, each stage's line by name, and the whole output."""
    proc = subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=900,
        # GPU_CHECK_WHEELS: not a .whl/ that gpu_wheels.sh filled here for the GPU host's Python
        env={**os.environ, "PYTHON": sys.executable, "OMP_NUM_THREADS": "1", "GPU_CHECK_WHEELS": "/nonexistent", **env},
    )
    lines = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(\S+)\s+([\d.]+) s\s+(PASS|FAIL|SKIP)\s+(.*)", line)
        if m:
            lines[m.group(1)] = f"{m.group(3)} {m.group(4)}"
            assert float(m.group(2)) >= 0
    return proc.returncode, lines, proc.stdout + proc.stderr


@pytest.mark.slow
def test_dry_run_passes_every_stage_a_cpu_can_run():
    pytest.importorskip("trl")
    rc, lines, out = _run("--dry-run")
    assert rc == 0, out[-3000:]
    assert out.startswith("host: python ") and "(dry run: CPU, float32)" in out
    assert list(lines) == ["decoder/tiny", "decoder/270m", "grpo/tiny", "grpo/270m"], out[-3000:]
    tiny = lines["decoder/tiny"]
    assert tiny.startswith("PASS 8 rows x <=64 tokens") and "float32 on cpu" in tiny, tiny
    assert "each a valid action; seeded row alone == in batch: True" in tiny
    assert lines["decoder/270m"].startswith("PASS 2 rows x <=12 tokens"), lines["decoder/270m"]
    grpo = lines["grpo/tiny"]
    decide = "PASS 1 step(s) x 8 negotiations (responsive?menu=moves&words=strategy)"
    assert grpo.startswith(decide) and "LoRA moved" in grpo, grpo
    reward = float(re.search(r"reward (-?[\d.]+)", grpo).group(1))  # type: ignore[union-attr]
    assert 0 <= reward <= 1
    assert lines["grpo/270m"] == (
        "SKIP skipped in --dry-run: the 270M-shaped config builds (268,098,176 parameters, on the meta device); "
        "it runs on CUDA only"
    )
    assert re.search(r"total\s+[\d.]+ s\s+3 passed, 0 failed, 1 skipped", out)


def test_a_failing_stage_fails_the_check():
    rc, lines, out = _run("--dry-run", "--stages", "decoder/tiny,grpo/270m", GPU_CHECK_FAIL="decoder/tiny")
    assert rc == 1, out[-3000:]
    assert lines["decoder/tiny"].startswith("FAIL AssertionError: failed on purpose (GPU_CHECK_FAIL=decoder/tiny)")
    assert lines["grpo/270m"].startswith("SKIP skipped in --dry-run")  # the other stages still run
    assert re.search(r"total\s+[\d.]+ s\s+0 passed, 1 failed, 1 skipped", out)


def test_a_hanging_stage_is_stopped_at_its_limit_and_fails():
    rc, lines, out = _run(
        "--dry-run", "--stages", "decoder/tiny,grpo/270m", "--limit", "20", GPU_CHECK_HANG="decoder/tiny"
    )
    assert rc == 1, out[-3000:]
    assert lines["decoder/tiny"] == (
        "FAIL timed out after 20 s; last said: hanging on purpose (GPU_CHECK_HANG=decoder/tiny)"
    )
    assert lines["grpo/270m"].startswith("SKIP skipped in --dry-run")  # the next stage still ran
    assert re.search(r"total\s+[\d.]+ s\s+0 passed, 1 failed, 1 skipped", out)


def test_without_a_gpu_every_stage_is_skipped_and_the_check_is_not_green():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the stages would run")
    rc, lines, out = _run()
    assert rc == 3, out[-3000:]
    assert list(lines) == ["decoder/tiny", "decoder/270m", "grpo/tiny", "grpo/270m"]
    assert set(lines.values()) == {
        "SKIP skipped: no CUDA device (torch.cuda.is_available() is False); --dry-run runs on the CPU"
    }
    assert out.strip().splitlines()[-1] == "gpu_check: no stage ran (every one was skipped): this checked nothing"


def test_bad_stage_names_are_refused_in_one_line():
    rc, lines, out = _run("--dry-run", "--stages", "grpo/7b")
    assert rc == 2 and not lines
    assert out.strip().splitlines()[-1] == (
        "gpu_check: unknown stage(s) grpo/7b; choose from decoder/tiny, decoder/270m, grpo/tiny, grpo/270m"
    )


def test_grpo_without_trl_is_skipped_naming_it(tmp_path, monkeypatch):
    """A GPU host without TRL: the GRPO stages say so and how to bring it, and do not fail."""
    gpu_check = _module(monkeypatch)
    monkeypatch.setitem(sys.modules, "trl", None)  # import trl -> ModuleNotFoundError, as where it is not installed
    result = gpu_check.run_stage(gpu_check.Check(dry_run=True, work=tmp_path), "grpo/tiny")
    assert result.status == "SKIP", result.why
    assert result.why == (
        "skipped: trl not installed (carry wheels: bash benchmarks/gpu_wheels.sh; docs/benchmarks.md)"
    )
    assert not (tmp_path / "tiny-random-gemma").exists()  # skipped before building anything
