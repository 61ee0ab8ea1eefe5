"""One training run, start to finish: ``train(config)``.

Loads the base model, builds the buyer pool and the GRPO prompts, runs TRL's
``GRPOTrainer`` with the negotiation rollouts, keeps the step log and the reward curve up
to date, checkpoints, and writes the adapter, the merged model and the manifest.

Rerunning into the same output folder resumes from the last checkpoint (the step log and
the episode log are cut back to that step first); a finished run is not trained again.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any

from negotiator.errors import UsageError
from negotiator.models.families import model_family
from negotiator.runtime import EpisodeLog

from .config import PROFILES, RUN_KEY_DEFAULTS, RUN_KEYS, TrainConfig, flag, setting_text
from .outputs import (
    MANIFEST,
    append_metrics,
    manifest,
    plot_reward_curve,
    read_metrics,
    rewind,
    save_models,
    write_json,
)
from .pool import DEFAULT_TACTICS, TRAIN_PERSONAS, BuyerPool

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL 1.16: we know


def build_pool(cfg: TrainConfig) -> BuyerPool:
    return BuyerPool(
        buyers=tuple(cfg.buyers or DEFAULT_TACTICS),
        personas=tuple(cfg.personas or TRAIN_PERSONAS),
        scenario_seeds=tuple(cfg.scenario_seeds),
        max_rounds=cfg.max_rounds,
        buyer_base_url=cfg.buyer_base_url,
    )


def preflight_buyers(pool: BuyerPool) -> None:
    """Refuse, before the model loads, a training buyer that obviously cannot answer (its server down, its key
    missing), as ``negotiator eval`` does: every negotiation of the first step ended in an error, and the run
    stopped there with a traceback."""
    from negotiator.errors import ProviderError, Unreachable
    from negotiator.models.preflight import preflight

    for spec in pool.buyers:
        try:
            preflight(spec, pool.base_url(spec))
        except ProviderError as e:
            raise Unreachable(f"training buyer {e}") from None


def prepare_out(cfg: TrainConfig) -> dict | None:
    """Create ``OUT``; refuse a folder that holds a different run. Returns a finished run's manifest."""
    out = cfg.out
    out.mkdir(parents=True, exist_ok=True)
    path = out / "config.json"
    if path.exists():
        old = json.loads(path.read_text())
        new = cfg.run_key()
        old = {**RUN_KEY_DEFAULTS, **old}
        diff = {k: (old.get(k), new[k]) for k in RUN_KEYS if old.get(k) != new[k]}
        if diff:
            raise UsageError(
                f"{out} already holds a different training run: {differences(diff, old.get('steps'), cfg.steps)}; "
                "choose a new --out folder, or rerun the command that started it to resume it"
            )
        if (out / MANIFEST).exists():
            done = read_manifest(out)
            if stopped_early(done, cfg.steps):  # at its time budget: a larger one (or none) trains on from the stop
                spent = [r["step_s"] for r in read_metrics(out) if isinstance(r.get("step_s"), (int, float))]
                if cfg.max_minutes is None or not out_of_time(spent, 60 * cfg.max_minutes):
                    (out / MANIFEST).unlink()
                    return None
            if done.get("max_steps", 0) >= cfg.steps:
                return done
            raise UsageError(
                f"{out} holds a finished run of {done.get('steps')} steps; choose a new --out folder to train longer"
            )
    write_json(path, {**cfg.run_key(), "steps": cfg.steps, "out": str(out)})
    return None


def read_manifest(out: Path) -> dict:
    """A finished run's manifest; a damaged one (its steps unreadable) is refused saying how to write it again."""
    path = out / MANIFEST
    try:
        done = json.loads(path.read_bytes())
    except ValueError:  # bad JSON or bad UTF-8
        done = None
    if not isinstance(done, dict) or any(type(done.get(k)) is not int for k in ("steps", "max_steps")):
        raise UsageError(
            f"{path} is damaged; delete it and rerun the same command to write it again from the run's last "
            "checkpoint, or choose a new --out folder"
        )
    return done


def differences(diff: dict[str, tuple], steps_there, steps_now: int) -> str:
    """The settings a rerun changed, by the flags that set them: ``--lr 0.0006 there, 0.001 now; ...``."""
    said = []
    for key, (there, now) in diff.items():
        if key == "lora_alpha" and "lora_r" in diff:  # --lora-r sets both
            continue
        if key == "dtype":  # no flag: the cpu profile picks it from the CPU (train.config.cpu_dtype)
            said.append(f"the precision {there} there, {now} on this machine (picked for the CPU it runs on)")
            continue
        line = f"{flag(key)} {setting_text(key, there)} there, {setting_text(key, now)} now"
        if key == "scenario_seeds" and steps_there is not None and steps_there != steps_now:
            line += (
                f" (without --scenario-seeds, one per prompt of --steps: {steps_there} steps there, {steps_now} now)"
            )
        said.append(line)
    return "; ".join(said[:4])


def stopped_early(done: dict, steps: int) -> bool:
    """Whether a run's manifest says it stopped at its training-time budget before ``steps``."""
    return bool(done.get("stopped_by_time_limit")) and isinstance(done.get("steps"), int) and done["steps"] < steps


def last_checkpoint(out: Path) -> Path | None:
    ckpts = [p for p in (out / "checkpoints").glob("checkpoint-*") if re.fullmatch(r"checkpoint-\d+", p.name)]
    ckpts = [p for p in ckpts if (p / "trainer_state.json").exists()]
    return max(ckpts, key=lambda p: int(p.name.split("-")[1]), default=None)


def check_checkpoint(ckpt: Path) -> None:
    """Refuse, before the model loads, a resume point whose files cannot be read back (a file cut short or
    overwritten): resuming from it ended the rerun in a traceback from torch, safetensors or json. The trainer
    writes trainer_state.json last, so a run killed while saving leaves no such checkpoint; this is damage."""
    import zipfile

    from safetensors import SafetensorError, safe_open

    name = "trainer_state.json"
    try:
        state = json.loads((ckpt / name).read_bytes())
        if not isinstance(state, dict) or not isinstance(state.get("global_step"), int):
            raise ValueError("not a trainer state")
        for path in sorted(ckpt.iterdir()):
            name = path.name
            if path.suffix in (".pt", ".pth"):  # torch.save writes zip archives
                zipfile.ZipFile(path).close()
            elif path.suffix == ".safetensors":
                with safe_open(str(path), framework="pt"):
                    pass
    except (OSError, ValueError, zipfile.BadZipFile, SafetensorError) as e:
        said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(
            f"{ckpt} is damaged ({name}: {said}); delete that folder to resume from the checkpoint before it "
            "(or from the start if there is none), or choose a new --out folder"
        ) from None


def train(cfg: TrainConfig, *, console=None, progress: bool = True) -> dict:
    """Train one arm; returns its manifest."""
    from datasets import Dataset

    from .base_model import load_base, resolve_base_path
    from .grpo import NegotiationRollouts, make_trainer, negotiation
    from .rollout import RolloutSettings
    from .tasks import episode_tasks, pool_tasks

    say = console.print if console is not None else (lambda *a, **k: None)
    warnings.filterwarnings("ignore", message=r".*deprecated and will be removed in v6.*", category=FutureWarning)
    # Everything that can be wrong with the input is checked before the folder is touched.
    cfg.check()
    pool = build_pool(cfg)
    preflight_buyers(pool)
    tasks = (
        episode_tasks(cfg.from_episodes, pool, cfg.seed)
        if cfg.from_episodes
        else pool_tasks(pool, cfg.prompts, cfg.seed)
    )
    check_fits_base(cfg, resolve_base_path(cfg.base, say))
    finished = prepare_out(cfg)
    if finished is not None:
        if stopped_early(finished, cfg.steps):
            say(
                f"{cfg.out} stopped at its training-time budget after {finished['steps']} of {cfg.steps} steps; "
                "outputs are there. Rerun with a larger --max-minutes (the budget is summed over the run's sessions) "
                "to train on"
            )
        else:
            n = finished["steps"]
            say(f"{cfg.out} is already trained ({n} step{'s' if n != 1 else ''}); outputs are there.")
        return push_run(cfg, finished, say) if cfg.push_to_hub else finished
    out = cfg.out
    resume = last_checkpoint(out)
    if resume is not None:
        check_checkpoint(resume)

    base = load_base(cfg.base, dtype=cfg.dtype, say=say)
    if resume is not None:
        step = int(resume.name.split("-")[1])
        rewind(out, step)
        say(f"resuming from {resume.name} (step {step} of {cfg.steps})")
    else:
        rewind(out, 0)  # a run killed before its first checkpoint starts over

    args = grpo_args(cfg, out)
    lora = lora_config(base.model, r=cfg.lora_r, alpha=cfg.lora_alpha, layers=cfg.lora_layers)
    rollouts = NegotiationRollouts(
        pool=pool,
        settings=RolloutSettings(
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            invalid_penalty=cfg.invalid_penalty,
            instructions=cfg.instructions,
            train_messages=cfg.train_messages is not False,  # resolve() has decided it from the buyers
            strategy=cfg.strategy,
            **served_sampling(base.path),
        ),
        tokenizer=base.tokenizer,
        seller_spec=f"train/{cfg.base}",
        seller_family=model_family(cfg.base if not cfg.base.startswith("local/") else base.path),
        log=EpisodeLog(out / "episodes.jsonl"),
        run_id=f"{out.resolve()}|{cfg.seed}",
        constrain=cfg.constrain,
        engine_factory=_vllm_engine_factory(cfg) if cfg.generation.startswith("vllm") else None,
        seed=cfg.seed,
    )
    step_log = StepLog(
        out,
        rollouts,
        cfg.steps,
        console if progress else None,
        title=f"{cfg.base}, lr {cfg.lr:g}",
        max_seconds=60 * cfg.max_minutes if cfg.max_minutes else None,
    )
    trainer = make_trainer(
        model=base.model,
        reward_funcs=[negotiation],
        args=args,
        train_dataset=Dataset.from_dict({"prompt": [t.model_dump_json() for t in tasks]}),
        processing_class=base.tokenizer,
        peft_config=lora,
        rollout_func=rollouts,
        callbacks=[step_log],
    )
    _quiet_trainer(trainer)
    _log_before_reporters(trainer, step_log)
    if rollouts.engine_factory is not None:
        rollouts.engine_factory.trainer = trainer  # type: ignore[attr-defined]  # the vLLM factory syncs weights from it
    if cfg.imitate and resume is None:  # a resumed run's checkpoint already holds the warm start
        warm_start(cfg, trainer, rollouts, pool, base, out, say)
    t0 = time.perf_counter()
    try:
        if cfg.steps:
            trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    finally:
        step_log.close()
    rows = read_metrics(out)
    plot_reward_curve(out, rows, step_log.title)
    save_models(trainer.model, base.tokenizer, out, base.path)
    record = manifest(
        cfg,
        base=base,
        pool=pool,
        rows=rows,
        steps_done=trainer.state.global_step,
        seconds=sum(r.get("step_s", 0.0) for r in rows) or time.perf_counter() - t0,
    )
    record["stopped_by_time_limit"] = step_log.stopped_by_time
    if (out / "imitation.json").exists():
        record["imitation"] = json.loads((out / "imitation.json").read_text())
    record["report_to"] = [r for r in cfg.report_to if r != "none"]
    write_json(out / MANIFEST, record)
    return push_run(cfg, record, say) if cfg.push_to_hub else record


def warm_start(cfg: TrainConfig, trainer, rollouts, pool, base, out: Path, say) -> dict:
    """The imitation warm start (train.imitate) on the trainer's adapter; OUT/imitation.json says what it did."""
    from .imitate import demonstrations, imitate

    who = {
        "strategy": "the strategy's own moves",
        "lookahead": "the lookahead teacher",
        "reader": "the reader teacher",
    }[cfg.teacher]
    margin = cfg.teacher_margin if cfg.teacher == "lookahead" else None
    say(f"imitation warm start: {cfg.imitate} negotiations played by {who} ...")
    traces, played = demonstrations(
        cfg.imitate,
        pool=pool,
        settings=rollouts.settings,
        tokenizer=base.tokenizer,
        seed=cfg.seed,
        family=rollouts.seller_family,
        lookahead=margin,
        reader=cfg.teacher == "reader",
    )
    record = {
        "teacher": cfg.teacher,
        **({"teacher_margin": margin} if margin is not None else {}),
        **played,
        **imitate(trainer.model, traces, lr=cfg.lr, seed=cfg.seed, say=say),
    }
    write_json(out / "imitation.json", record)
    say(
        f"imitation: answer-token loss {record['loss_before']} -> {record['loss_after']}, "
        f"accuracy {record['token_accuracy_before']} -> {record['token_accuracy_after']} ({record['seconds']} s)"
    )
    return record


def push_run(cfg: TrainConfig, record: dict, say) -> dict:
    """Push the finished run in ``cfg.out`` to the hub; the manifest records where it went."""
    from .hub import default_repo_id, push

    repo_id = cfg.hub_model_id or default_repo_id(cfg.out)
    say(f"pushing the adapter of {cfg.out} to the hub as {repo_id} ...")
    record = {**record, "hub": push(cfg.out, repo_id, private=cfg.hub_private_repo)}
    write_json(cfg.out / MANIFEST, record)
    return record


def grpo_args(cfg: TrainConfig, out: Path | None = None):
    """TRL's GRPOConfig for a run: the profile's settings, never TRL's defaults silently."""
    from trl import GRPOConfig

    out = out if out is not None else cfg.out
    checkpointing: dict[str, Any] = {checkpointing_arg(GRPOConfig): cfg.profile == "gpu"}
    return GRPOConfig(
        output_dir=str(out / "checkpoints"),
        learning_rate=cfg.lr,
        lr_scheduler_type="constant",
        max_steps=cfg.steps,
        num_generations=cfg.num_generations,
        per_device_train_batch_size=cfg.micro_batch,
        gradient_accumulation_steps=cfg.generation_batch // cfg.micro_batch,
        temperature=cfg.temperature,
        beta=0.0,
        scale_rewards=cfg.scale_rewards,
        max_completion_length=cfg.max_tokens,
        logging_steps=1,
        save_steps=cfg.save_steps,
        save_total_limit=2,
        report_to=cfg.report_to,  # TensorBoard writes under OUT/checkpoints/runs: `tensorboard --logdir OUT`
        run_name=out.name,  # the run's name in W&B, MLflow, trackio ...
        disable_tqdm=True,
        seed=cfg.seed,
        use_cpu=cfg.profile == "cpu",
        bf16=cfg.profile == "gpu" and cfg.dtype == "bfloat16",
        use_vllm=cfg.generation.startswith("vllm"),
        vllm_mode="server" if cfg.generation == "vllm-server" else "colocate",
        vllm_server_base_url=cfg.vllm_server_url,
        remove_unused_columns=False,
        dataloader_num_workers=0,
        # TRL turns it on by default. On the CPU recomputing activations costs more than
        # storing them, and with LoRA it makes the backward pass run through every layer
        # instead of stopping at the lowest adapted one.
        **checkpointing,
    )


def checkpointing_arg(config_class) -> str:
    """The name of the activation-checkpointing switch in this transformers' training arguments.

    transformers 5.2x renamed ``gradient_checkpointing`` to ``activation_checkpointing`` (the old
    name a deprecated alias until v6); earlier 5.x releases, such as the 5.17 of a CUDA host the
    GPU check ran on, know only the old name.
    """
    fields = getattr(config_class, "__dataclass_fields__", {})
    return "activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"


def served_sampling(folder: str) -> dict:
    """top-p and top-k the local server would sample the base with (its generation_config.json)."""
    from negotiator.models.local.decoding import sampling_defaults

    d = sampling_defaults(folder)
    return {"top_p": d.top_p, "top_k": d.top_k}


def lora_config(model, *, r: int, alpha: int, layers: int | None):
    """The adapter a run trains: rank ``r`` on every attention and MLP projection of the top
    ``layers`` decoder layers (None: all)."""
    from peft import LoraConfig

    return LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=0.0,
        task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        layers_to_transform=_top_layers(model, layers),
    )


def _top_layers(model, n: int | None) -> list[int] | None:
    if n is None:
        return None
    total = model.config.get_text_config().num_hidden_layers
    return list(range(max(0, total - n), total))  # a profile's default on a smaller model: all


def check_fits_base(cfg: TrainConfig, path: str) -> None:
    """Refuse, before the run folder is recorded, a base model that cannot be had (a hub id the
    hub does not give, or any hub id while remote requests are blocked) and sizes the base cannot
    take: more adapted layers than it has (``--lora-layers``; peft adapted all of them without a
    word; the cpu profile's default 6 adapts all of a smaller model), a LoRA rank above its hidden
    size, a turn longer than its context. Recorded first, a corrected rerun was refused as a
    different run."""
    from transformers import AutoConfig

    from negotiator.models.base import remote_blocked

    hub = not (Path(path) / "config.json").is_file()
    try:
        config = AutoConfig.from_pretrained(path, local_files_only=hub and remote_blocked())
    except (OSError, ValueError) as e:
        said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        blocked = " (remote requests are blocked: NEGOTIATOR_BLOCK_REMOTE)" if hub and remote_blocked() else ""
        raise UsageError(
            f"--base {cfg.base}: cannot load its config{blocked}: {said} Give a model folder written by "
            "save_pretrained, the output folder of a training run, local/gemma-3-270m, or a model hub id on a "
            "machine that reaches the hub"
        ) from None
    given = cfg.lora_layers if cfg.lora_layers != PROFILES[cfg.profile]["lora_layers"] else None
    _check_sizes(given, cfg.lora_r, cfg.max_tokens, config.get_text_config())


def _check_sizes(layers: int | None, r: int | None, max_tokens: int | None, text_config) -> None:
    total, hidden = text_config.num_hidden_layers, text_config.hidden_size
    context = getattr(text_config, "max_position_embeddings", None)
    if layers is not None and layers > total:
        raise UsageError(
            f"--lora-layers {layers}: the base model has {total} decoder layers; give at most {total} "
            "(0 adapts all of them)"
        )
    if r is not None and r > hidden:
        raise UsageError(f"--lora-r {r}: above the base model's hidden size ({hidden}); give at most {hidden}")
    if max_tokens is not None and context and max_tokens > context:
        raise UsageError(f"--max-tokens {max_tokens}: above the base model's context ({context} tokens)")


def _log_before_reporters(trainer, step_log) -> None:
    """Put the step log first among the trainer's callbacks, so the negotiation metrics it adds to each
    step's logs reach TensorBoard, W&B and the other reporters (which the trainer adds before it)."""
    callbacks = trainer.callback_handler.callbacks
    callbacks.remove(step_log)
    callbacks.insert(0, step_log)


def _quiet_trainer(trainer) -> None:
    """Our step log and progress bar replace the trainer's printed log dicts."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for cb in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(cb)


def _vllm_engine_factory(cfg: TrainConfig):
    from .vllm_engine import VLLMEngineFactory

    return VLLMEngineFactory(cfg)


try:
    from transformers import TrainerCallback
except ImportError:  # the train extra is not installed; train() says so when called
    TrainerCallback = object  # type: ignore[misc,assignment]


def out_of_time(step_seconds: list[float], budget_s: float) -> bool:
    """Whether another step would overrun the training-time budget: the time spent so far
    plus a typical step (the median; the first step's warm-up would skew a mean) exceeds it.
    Stopping before the step, not after it, keeps a run inside the budget it was given."""
    if not step_seconds:
        return False
    ordered = sorted(step_seconds)
    typical = ordered[len(ordered) // 2]
    return sum(step_seconds) + typical > budget_s


# What each step adds to the trainer's logs (so TensorBoard, W&B ... show it as negotiation/NAME).
REPORTED = (
    "score",
    "deal_rate",
    "invalid_rate",
    "first_offer_utility",
    "guard_interventions",
    "errors",
    "truncated",
    "rollout_s",
    "optimize_s",
)


class StepLog(TrainerCallback):
    """One metrics line per step, the reward curve redrawn, and the progress bar."""

    def __init__(self, out: Path, rollouts, total: int, console, title: str = "", max_seconds: float | None = None):
        self.out, self.rollouts, self.total, self.console, self.title = out, rollouts, total, console, title
        self.max_seconds = max_seconds  # training time budget, summed over resumed sessions
        self.stopped_by_time = False
        self._t0 = time.perf_counter()
        self._progress: Any = None  # a rich Progress while steps run
        self._task = None

    def on_train_begin(self, args, state, control, **kwargs):
        if self.console is None:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]GRPO[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
            console=self.console,
        )
        self._progress.start()
        self._task = self._progress.add_task("", total=self.total, completed=state.global_step)

    def on_step_begin(self, args, state, control, **kwargs):
        self._t0 = time.perf_counter()

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" not in logs or not self.rollouts.history:
            return
        stats = self.rollouts.history[-1]
        step_s = time.perf_counter() - self._t0
        row = {
            "step": state.global_step,
            **{k: v for k, v in vars(stats).items() if k != "step"},
            "optimize_s": round(max(0.0, step_s - stats.rollout_s), 3),
            "step_s": round(step_s, 3),
            "loss": logs.get("loss"),
            "grad_norm": logs.get("grad_norm"),
            "learning_rate": logs.get("learning_rate"),
            "entropy": logs.get("entropy"),
            "reward_std": logs.get("reward_std"),
            "frac_reward_zero_std": logs.get("frac_reward_zero_std"),
        }
        append_metrics(self.out, row)
        # The negotiations' own measures, beside TRL's loss and reward, for the reporters that log after us.
        logs.update({f"negotiation/{k}": row[k] for k in REPORTED if isinstance(row.get(k), (int, float))})
        rows = read_metrics(self.out)
        plot_reward_curve(self.out, rows, self.title)
        if (
            self.max_seconds is not None
            and state.global_step < self.total
            and out_of_time([r["step_s"] for r in rows], self.max_seconds)
        ):
            control.should_training_stop = True
            control.should_save = True  # a resume point at the stop: a rerun with a larger budget trains on from it
            self.stopped_by_time = True
        if self._progress is not None:
            avg = sum(r["reward"] for r in rows[-5:]) / len(rows[-5:])
            self._progress.update(
                self._task,
                completed=state.global_step,
                description=f"reward {stats.reward:+.3f} (5-step avg {avg:+.3f})  deals {stats.deal_rate:.0%}  "
                f"invalid {stats.invalid_rate:.0%}  gen {stats.rollout_s:.0f}s opt {row['optimize_s']:.0f}s",
            )

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
