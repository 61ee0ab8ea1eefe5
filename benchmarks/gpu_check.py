"""A prepared GPU check: the local decoder and a few GRPO steps on CUDA, each timed, pass or fail.

Four stages, each printing one line (name, seconds, PASS/FAIL/SKIP, why):

* ``decoder/tiny``: the local :class:`~negotiator.models.local.decoding.Decoder` (the one
  the local server and training rollouts generate with) on a tiny random Gemma 3, eight
  real first seller prompts of the quick suite, grammar-constrained, seeded; one seeded
  row is decoded alone and again inside the batch (the decoder claims batch invariance);
* ``decoder/270m``: the same on a Gemma-3-270M-shaped model (the embedded model's config,
  random weights, never a download) in bf16;
* ``grpo/tiny`` and ``grpo/270m``: ``negotiator train``'s own run (``train.run.train``:
  TRL's GRPOTrainer, LoRA, the negotiation rollouts on that decoder) for a few steps on
  each, bf16 on CUDA: decision rollouts (``--strategy responsive?menu=moves&words=strategy``,
  the model choosing among the priced moves, about 15 tokens a turn) after the imitation warm
  start on two negotiations (``--imitate 2``), as docs/decisions.md trains the decision seller.

Both models are built from configs on the spot, with the tiny model's byte-level
tokenizer (the 270M-shaped one's embedding keeps Gemma's 262,144 rows; the tokenizer
uses the first 512, the grammar masks the rest). Its prompts run about 1.9x longer in
tokens than with Gemma's tokenizer (the quick suite's first seller turns: 920 to 1,110
tokens against 490 to 540), so the timings are an upper bound on the real model's.

A stage whose Python packages are missing (trl on a bare GPU host, say) is skipped with
a line naming the package, never a traceback: benchmarks/gpu_wheels.sh fetches wheels to
carry there, and gpu_check.sh installs them from ``.whl/``. The exit status is 1 when a
stage failed, 3 when every stage was skipped (nothing was checked), 2 for a bad argument,
else 0.

``--dry-run`` runs on the CPU (CUDA hidden), in float32: the tiny model's stages as on the
GPU but one GRPO step; the 270M-shaped model is built, saved and read back, and decodes two
rows of 12 tokens; its GRPO stage builds the config on the meta device (the parameter count
is checked) and says it was skipped. A CPU test (tests/test_gpu_check.py) runs it, in about
a minute on 2 cores.

    bash benchmarks/gpu_check.sh [--dry-run] [--stages decoder/tiny,grpo/tiny] [--keep DIR] [--limit S]

Each stage runs in a process of its own, stopped at its time limit (``--limit`` overrides
it): a stage that hangs or crashes is a FAIL line and the next stage still runs.
``GPU_CHECK_FAIL=STAGE`` makes that stage fail on purpose, ``GPU_CHECK_HANG=STAGE`` hang
(the test checks that each gives a FAIL line and a non-zero exit).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DECIDE = "responsive?menu=moves&words=strategy"  # the decision seller (docs/decisions.md)
STAGES = ("decoder/tiny", "decoder/270m", "grpo/tiny", "grpo/270m")

# The embedded model's shape (models/gemma-3-270m/config.json, as prepared from the GGUF).
GEMMA_3_270M: dict[str, Any] = {
    "hidden_size": 640,
    "intermediate_size": 2048,
    "num_hidden_layers": 18,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "vocab_size": 262_144,
    "sliding_window": 512,
    "max_position_embeddings": 32_768,
    "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-6,
    "hidden_activation": "gelu_pytorch_tanh",
    "tie_word_embeddings": True,
    "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 3,
    "rope_parameters": {
        "full_attention": {"rope_theta": 1_000_000.0, "rope_type": "default"},
        "sliding_attention": {"rope_theta": 10_000.0, "rope_type": "default"},
    },
}
GEMMA_3_270M_PARAMS = 268_098_176  # with tied embeddings, as transformers counts the real one

# Each stage runs in a process of its own, stopped at its limit: on an H200 all four fit in
# 8 minutes even if each one hangs. The dry run's are for a busy 2-core CPU.
LIMITS = {"decoder/tiny": 60, "decoder/270m": 90, "grpo/tiny": 120, "grpo/270m": 210}
DRY_LIMITS = dict.fromkeys(STAGES, 240)

DECODER_ROWS = 8
DECODER_TOKENS = 64


class Skip(Exception):
    """The stage could not run here (a package or the GPU missing): not a failure."""


@dataclass
class Result:
    stage: str
    status: str  # PASS, FAIL, SKIP
    seconds: float
    why: str

    def line(self) -> str:
        return f"{self.stage:<13} {self.seconds:7.1f} s  {self.status:<4}  {self.why}"


@dataclass
class Check:
    dry_run: bool
    work: Path

    @property
    def device(self) -> str:
        return "cpu" if self.dry_run else "cuda"

    @property
    def dtype(self) -> str:
        return "float32" if self.dry_run else "bfloat16"  # float32: bf16 is emulated on most CPUs


# ---------------------------------------------------------------------------------------------
# The models


def tiny_folder(check: Check) -> Path:
    from negotiator.models.local.tiny import build_tiny_gemma

    folder = check.work / "tiny-random-gemma"
    if not (folder / "config.json").is_file():
        build_tiny_gemma(folder)
    return folder


def gemma_270m_config(vocab_special: dict):
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(**GEMMA_3_270M, **vocab_special)


def gemma_270m_folder(check: Check) -> Path:
    """A Gemma-3-270M-shaped model with random weights (bf16) and the tiny model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, Gemma3ForCausalLM

    from negotiator.models.local.decoding import set_turn_stops

    folder = check.work / "gemma-3-270m-random"
    if (folder / "config.json").is_file():
        return folder
    tok = AutoTokenizer.from_pretrained(str(tiny_folder(check)))
    special = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}
    torch.manual_seed(0)
    with torch.device(check.device):  # initialised where it runs: seconds on a GPU, not a minute on the CPU
        model = Gemma3ForCausalLM(gemma_270m_config(special))
        model.to(torch.bfloat16)  # type: ignore[arg-type]  # transformers wraps .to; mypy misreads the wrapper
    n = sum(p.numel() for p in model.parameters())
    if n != GEMMA_3_270M_PARAMS:
        raise AssertionError(f"the 270M-shaped config has {n:,} parameters, not {GEMMA_3_270M_PARAMS:,}")
    set_turn_stops(model, tok)
    model.save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder


def gemma_270m_on_meta() -> int:
    """The 270M-shaped config built without memory: its parameter count."""
    import torch
    from transformers import Gemma3ForCausalLM

    with torch.device("meta"):
        model = Gemma3ForCausalLM(gemma_270m_config({"bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0}))
    return sum(p.numel() for p in model.parameters())


# ---------------------------------------------------------------------------------------------
# The stages


def need(*modules: str) -> None:
    """Skip the stage, naming the first package this host lacks."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            missing = (e.name or name).split(".")[0]
            raise Skip(
                f"skipped: {missing} not installed (carry wheels: bash benchmarks/gpu_wheels.sh; docs/benchmarks.md)"
            ) from None


def need_cuda(check: Check) -> None:
    import torch

    if not check.dry_run and not torch.cuda.is_available():
        raise Skip("skipped: no CUDA device (torch.cuda.is_available() is False); --dry-run runs on the CPU")


def decoder_batch(check: Check, folder: Callable[[Check], Path], rows: int, tokens: int):
    """The local decoder on ``folder``'s model, on the check's device, and a function that makes
    its seeded batch: ``rows`` first seller turns of the quick suite, grammar-constrained."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evals.prompts import first_seller_turns
    from negotiator.models.local.decoding import Decoder, Request, Sampling, set_turn_stops

    path = folder(check)
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=getattr(torch, check.dtype))
    model.to(torch.device(check.device))  # type: ignore[arg-type]  # transformers wraps .to; mypy misreads it
    model.eval()
    set_turn_stops(model, tok)
    engine = Decoder(model, tok)
    prompts = first_seller_turns(rows)

    def requests():
        return [
            Request(engine.prompt_ids(m), tokens, Sampling(temperature=1.0, seed=100 + i), engine.grammar(s))
            for i, (m, s) in enumerate(prompts)
        ]

    return engine, requests


def decoder_stage(
    check: Check, folder: Callable[[Check], Path], rows: int = DECODER_ROWS, tokens: int = DECODER_TOKENS
) -> str:
    need("pydantic", "negotiator.models.local.decoding", "torch", "transformers", "xgrammar")
    need_cuda(check)
    import torch

    from negotiator.actions import ActionParseError, read_action_data

    engine, requests = decoder_batch(check, folder, rows, tokens)
    engine.generate(requests())  # warm-up on the batch itself: on CUDA the first pass at each shape
    # chooses its kernels, and a one-row warm-up left the timed batch 5x slower (docs/benchmarks.md)
    sync = torch.cuda.synchronize if check.device == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    batch = engine.generate(requests())
    sync()
    seconds = time.perf_counter() - t0
    row = rows // 2
    alone = engine.generate(requests()[row : row + 1])[0]
    generated = sum(d.completion_tokens for d in batch)
    if any(d.completion_tokens < 1 for d in batch):
        raise AssertionError("a row generated no token")
    finished = [d for d in batch if d.finish_reason == "stop"]
    for d in finished:  # the grammar closed the JSON: the deployed seller's reader must read an action
        try:
            read_action_data(d.text)
        except ActionParseError as e:
            raise AssertionError(f"a finished answer is not an action ({e}): {d.text[:80]!r}") from None
    prompt_tokens = sum(d.prompt_tokens for d in batch) // len(batch)
    invariant = alone.token_ids == batch[row].token_ids
    return (
        f"{len(batch)} rows x <={tokens} tokens, prompts ~{prompt_tokens} tokens, {check.dtype} on "
        f"{check.device}: {generated} tokens in {seconds:.2f} s ({generated / seconds:.0f} tok/s); "
        f"{len(finished)} of {len(batch)} closed their JSON, each a valid action; seeded row alone == in batch: {invariant}"
    )


def grpo_stage(check: Check, folder: Callable[[Check], Path], steps: int) -> str:
    need("pydantic", "negotiator", "torch", "transformers", "peft", "accelerate", "datasets", "xgrammar", "trl")
    need("train.run")  # the project's own imports (langgraph and the rest)
    need_cuda(check)
    from train.config import resolve
    from train.run import train

    base = folder(check)
    out = check.work / f"run-{base.name}"
    cfg = resolve(
        "cpu" if check.dry_run else "gpu",
        out=out,
        base=f"local/{base}",
        lr=6e-4,  # the cpu profile's rate, which moved the 270M's LoRA
        steps=steps,
        dtype=check.dtype,
        generation="transformers",  # vLLM is not on the GPU host; this is the local decoder the CPU trains with
        num_generations=4,
        prompts_per_step=2,
        micro_batch=2,
        scenario_seeds=[3, 4, 5],
        max_tokens=24,
        max_rounds=3,
        strategy=DECIDE,
        imitate=2,
        save_steps=steps,
        invalid_penalty=0.1,
    )
    t0 = time.perf_counter()
    manifest = train(cfg, progress=False)
    seconds = time.perf_counter() - t0
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    if manifest["steps"] != steps or [r["step"] for r in rows] != list(range(1, steps + 1)):
        raise AssertionError(f"asked for {steps} steps, the run logged {[r['step'] for r in rows]}")
    bad = [r["step"] for r in rows if not (math.isfinite(r["loss"]) and math.isfinite(r["grad_norm"]))]
    if bad:
        raise AssertionError(f"loss or gradient norm not finite at step(s) {bad}")
    from safetensors.torch import load_file

    moved = sum(
        float(v.float().abs().sum())
        for k, v in load_file(str(out / "adapter" / "adapter_model.safetensors")).items()
        if "lora_B" in k
    )
    spread = any(r.get("frac_reward_zero_std", 0.0) < 1 for r in rows)  # some group's rewards differed
    if spread and not moved > 0:
        raise AssertionError("the LoRA weights did not move, though some group's rewards differed")
    lora = "LoRA moved" if moved > 0 else "LoRA unchanged: every group scored alike (no advantage to learn from)"
    total = {k: sum(r.get(k, 0) for r in rows) for k in ("rollout_s", "optimize_s", "seller_tokens", "env_tokens")}
    return (
        f"{steps} step(s) x 8 negotiations ({cfg.strategy}), {check.dtype} on {check.device}: {seconds:.1f} s "
        f"(rollouts {total['rollout_s']:.1f} s + optimisation {total['optimize_s']:.1f} s), "
        f"{total['seller_tokens']} tokens generated + {total['env_tokens']} from the environment; last step: "
        f"reward {rows[-1]['reward']:.3f}, loss {rows[-1]['loss']:.4f}, grad norm {rows[-1]['grad_norm']:.3g}; {lora}"
    )


def meta_270m_skip(check: Check) -> str:
    need("torch", "transformers")
    n = gemma_270m_on_meta()
    if n != GEMMA_3_270M_PARAMS:
        raise AssertionError(f"the 270M-shaped config has {n:,} parameters, not {GEMMA_3_270M_PARAMS:,}")
    raise Skip(
        f"skipped in --dry-run: the 270M-shaped config builds ({n:,} parameters, on the meta device); it runs on CUDA only"
    )


def run_stage(check: Check, name: str) -> Result:
    t0 = time.perf_counter()
    try:
        if os.environ.get("GPU_CHECK_FAIL") == name:
            raise AssertionError(f"failed on purpose (GPU_CHECK_FAIL={name})")
        if os.environ.get("GPU_CHECK_HANG") == name:
            print(f"hanging on purpose (GPU_CHECK_HANG={name})", file=sys.stderr, flush=True)
            time.sleep(3600)
        if check.dry_run and name == "grpo/270m":
            why = meta_270m_skip(check)
        elif name == "decoder/tiny":
            why = decoder_stage(check, tiny_folder)
        elif name == "decoder/270m":  # the dry run: the folder built and read back, two short rows
            why = decoder_stage(check, gemma_270m_folder, *((2, 12) if check.dry_run else ()))
        elif name == "grpo/tiny":
            why = grpo_stage(check, tiny_folder, steps=1 if check.dry_run else 3)
        elif name == "grpo/270m":
            why = grpo_stage(check, gemma_270m_folder, steps=2)
        else:
            raise AssertionError(f"unknown stage {name}")
        status = "PASS"
    except Skip as e:
        status, why = "SKIP", str(e)
    except Exception as e:  # noqa: BLE001  # a check reports every failure as a line, and goes on
        status = "FAIL"
        where = traceback.extract_tb(e.__traceback__)[-1]
        why = f"{type(e).__name__}: {' '.join(str(e).split())[:300]} ({Path(where.filename).name}:{where.lineno})"
        if os.environ.get("GPU_CHECK_TRACEBACK"):
            traceback.print_exc()
    return Result(name, status, time.perf_counter() - t0, why)


def run_isolated(check: Check, name: str, limit: float) -> Result:
    """``run_stage`` in a process of its own, stopped after ``limit`` seconds: a stage that
    hangs or crashes (a CUDA fault, memory) is a FAIL line, and the stages after it still run."""
    import subprocess

    cmd = [sys.executable, __file__, "--stage-worker", name, "--keep", str(check.work)]
    cmd += ["--dry-run"] if check.dry_run else []
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        last = _last_line(err)
        return Result(
            name,
            "FAIL",
            time.perf_counter() - t0,
            f"timed out after {limit:.0f} s" + (f"; last said: {last}" if last else ""),
        )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT):
            r = json.loads(line[len(RESULT) :])
            if os.environ.get("GPU_CHECK_TRACEBACK") and r["status"] == "FAIL":
                sys.stdout.write(proc.stderr[-6000:])
            return Result(name, r["status"], r["seconds"], r["why"])
    return Result(
        name,
        "FAIL",
        time.perf_counter() - t0,
        f"its process ended (exit status {proc.returncode}) without a result; last said: {_last_line(proc.stderr)}",
    )


RESULT = "GPU_CHECK_RESULT "


def _last_line(text: str) -> str:
    lines = [x.strip() for x in text.replace("\r", "\n").splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


def host_line(check: Check) -> str:
    parts = [f"python {sys.version.split()[0]}"]
    try:
        import torch

        parts.append(f"torch {torch.__version__}")
        if torch.cuda.is_available():
            parts.append(f"{torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})")
        else:
            parts.append("no CUDA device")
    except ModuleNotFoundError:
        parts.append("no torch")
    for name in ("transformers", "trl", "peft", "xgrammar"):
        try:
            from importlib.metadata import version

            parts.append(f"{name} {version(name)}")
        except Exception:  # noqa: BLE001
            parts.append(f"no {name}")
    return "host: " + ", ".join(parts) + (" (dry run: CPU, float32)" if check.dry_run else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpu_check", description=__doc__.split("\n")[0])
    p.add_argument("--dry-run", action="store_true", help="run on the CPU, small: what a CPU test can run")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of: {', '.join(STAGES)}")
    p.add_argument("--keep", type=Path, help="write the models and runs here (default: a temporary folder)")
    p.add_argument("--limit", type=float, help="seconds each stage may take (default: 60 to 210 by stage; dry run 240)")
    p.add_argument("--stage-worker", help=argparse.SUPPRESS)  # one stage, in the process run_isolated starts
    a = p.parse_args(argv)
    if a.stage_worker:
        r = run_stage(Check(dry_run=a.dry_run, work=a.keep), a.stage_worker)
        print(RESULT + json.dumps({"status": r.status, "seconds": r.seconds, "why": r.why}), flush=True)
        return 0
    if a.dry_run:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch loads: the dry run is the CPU's, on any host
    stages = [s.strip() for s in a.stages.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        print(f"gpu_check: unknown stage(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(STAGES)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        work = a.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("NEGOTIATOR_HOME", str(work / "home"))  # no cache of the user's touched
        check = Check(dry_run=a.dry_run, work=work)
        print(host_line(check), flush=True)
        t0 = time.perf_counter()
        results = []
        for name in stages:
            results.append(run_isolated(check, name, a.limit or (DRY_LIMITS if a.dry_run else LIMITS)[name]))
            print(results[-1].line(), flush=True)
    counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "SKIP")}
    print(
        f"total         {time.perf_counter() - t0:7.1f} s  "
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped",
        flush=True,
    )
    if counts["FAIL"]:
        return 1
    if not counts["PASS"]:
        print("gpu_check: no stage ran (every one was skipped): this checked nothing")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
