"""``negotiator train``: turn a small open model into a better seller with GRPO."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, NoReturn, cast

import typer
from rich.markup import escape

from ..errors import PushFailed, TrainingFailed, UsageError
from .app import EXIT_INTERRUPTED, app, console, err_console, output_folder


def _parse_lrs(text: str) -> list[float]:
    try:
        lrs = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(
            f"--lr {text!r}: give a learning rate such as 6e-4, or several separated by commas (3e-4,6e-4,1e-3)"
        ) from None
    if not lrs or any(not 0 < x < 1 for x in lrs):
        raise UsageError(f"--lr {text!r}: learning rates must lie between 0 and 1")
    if len(set(lrs)) != len(lrs):
        raise UsageError(f"--lr {text!r}: a learning rate appears twice")
    # Each arm's folder (OUT/lr0.0006 ...): 1e-3 and 1.000001e-3 both trained into lr0.001, and the second arm was
    # refused there after the first had trained.
    folders = [f"lr{x:g}" for x in lrs]
    for i, name in enumerate(folders):
        if name in folders[:i]:
            raise UsageError(
                f"--lr {text!r}: {lrs[folders.index(name)]:.7g} and {lrs[i]:.7g} would train into the same folder "
                f"{name}; give rates that differ in their first six digits"
            )
    return lrs


def _check_out(out: Path) -> None:
    """A folder to train into; a run already there must have readable records (a rerun resumes it)."""
    import json

    from train.run import read_manifest

    output_folder(out)
    path = out / "config.json"
    if path.is_file():
        try:
            data = json.loads(path.read_bytes())
        except ValueError:  # bad JSON or bad UTF-8
            data = None
        if not isinstance(data, dict):
            raise UsageError(f"{path} is damaged; restore it, or choose a new --out folder for this training run")
    if (out / "manifest.json").is_file():
        read_manifest(out)


@app.command("train")
def train_command(
    out: Annotated[
        Path,
        typer.Option(
            help="Output folder: adapter/, merged/, manifest.json, episodes.jsonl, reward_curve.png. Rerun into it to "
            "resume."
        ),
    ],
    base: Annotated[
        str,
        typer.Option(
            help="Model to start from: local/gemma-3-270m (embedded), local/PATH (a model folder or an earlier "
            "run), or a "
            "model hub id."
        ),
    ] = "local/gemma-3-270m",
    lr: Annotated[
        str | None,
        typer.Option(
            help="Learning rate; several separated by commas (3e-4,6e-4,1e-3) train one arm each, then evaluate "
            "every arm "
            "and the base on the held-out suite and compare them. Profile default: cpu 6e-4 (what moved the 270M's "
            "LoRA in 30 updates), gpu 3e-6 (the paper's)."
        ),
    ] = None,
    steps: Annotated[
        int, typer.Option(help="GRPO steps (optimizer updates); 0 with --imitate: the warm start alone.")
    ] = 30,
    max_minutes: Annotated[
        float | None,
        typer.Option(
            help="Training-time budget: no step starts that would end past it (judged by the median step so far); the "
            "steps done are kept and saved; rerun with a larger budget to train on."
        ),
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            help="cpu: embedded 270M, small groups, full-length negotiations, lr 6e-4; gpu: bf16, vLLM generation, lr "
            "3e-6."
        ),
    ] = "cpu",
    group_size: Annotated[
        int | None,
        typer.Option(help="Negotiations per GRPO group (same scenario, buyer and seed). Profile default."),
    ] = None,
    prompts_per_step: Annotated[int | None, typer.Option(help="Groups per step. Profile default.")] = None,
    micro_batch: Annotated[
        int | None, typer.Option(help="Sequences per forward/backward pass. Profile default.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Token limit of one seller turn; a longer answer is invalid. Profile default.")
    ] = None,
    max_rounds: Annotated[
        int | None,
        typer.Option(help="Cap on the rounds of training negotiations (0: the scenario's own). Profile default."),
    ] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature of the seller during rollouts.")] = 1.0,
    invalid_penalty: Annotated[
        float, typer.Option(help="Subtracted from the reward at an invalid-answer rate of 1.")
    ] = 0.1,
    scale_rewards: Annotated[
        str,
        typer.Option(
            help="Divide GRPO advantages by the reward std of the whole step (batch), of each group (group: TRL's "
            "default)"
            " or not at all (none)."
        ),
    ] = "batch",
    train_messages: Annotated[
        bool | None,
        typer.Option(
            "--train-messages/--no-train-messages",
            help="Whether the loss reads the words of the seller's messages. Default: only when a training buyer "
            "is not "
            "rule-based (rule buyers read only the terms, so message tokens are noise to them).",
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            help="The seller that plays the rollouts: a strategy with its settings as in a seller spec "
            "(boulware?candidates=3, the default: the assisted seller, whose model learns which of three offers to "
            "pick, when to accept and what to say), or none (the pure LLM policy, which writes its own terms)."
        ),
    ] = None,
    lora_r: Annotated[int, typer.Option(help="LoRA rank (at most the base model's hidden size).")] = 16,
    lora_layers: Annotated[
        int | None,
        typer.Option(
            help="Adapt only the top N decoder layers (0: all; at most the base model's). Profile default "
            "(cpu: 6, all of a smaller model; gpu: all)."
        ),
    ] = None,
    buyer: Annotated[
        list[str] | None,
        typer.Option(
            help="Training buyer spec; repeat for several. Default: rule-based tactics with training-only parameters."
        ),
    ] = None,
    buyer_base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server for LLM training buyers.")
    ] = None,
    persona: Annotated[
        list[str] | None, typer.Option(help="Training persona; repeat for several. Default: all training personas.")
    ] = None,
    scenario_seeds: Annotated[
        str | None,
        typer.Option(
            help="Training scenario seeds, A-B or A,B,C (training range only). Default: one per prompt, and at "
            "least one per --imitate negotiation, from 0."
        ),
    ] = None,
    from_episodes: Annotated[
        Path | None,
        typer.Option(
            help="Logged episodes (a JSONL file, or a run's folder with its episodes.jsonl): their seller decision "
            "points become the prompts; pool buyers continue."
        ),
    ] = None,
    imitate: Annotated[
        int,
        typer.Option(
            help="Warm start: negotiations played by the strategy's own moves that the model learns to answer "
            "like before GRPO (0: none; the decision seller needs it, docs/decisions.md)."
        ),
    ] = 0,
    teacher: Annotated[
        str,
        typer.Option(
            help="Who plays the --imitate negotiations: strategy (its own move), lookahead (every open move "
            "played out against the training buyer, the best one made) or reader (the strategy's move had it "
            "read every phrasing the talking buyer used); docs/decisions.md."
        ),
    ] = "strategy",
    teacher_margin: Annotated[
        float | None,
        typer.Option(
            help="How much more (in seller score, 0 to 1) another move must be worth, played out, than the "
            "strategy's own for the lookahead teacher to make it [default: 0.1]."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of task order, buyers and sampling.")] = 0,
    constrain: Annotated[
        bool,
        typer.Option(help="Grammar-constrained decoding of the seller's JSON action, as the local server serves it."),
    ] = True,
    generation: Annotated[
        str | None,
        typer.Option(help="transformers (cpu), vllm-colocate or vllm-server (gpu; see deployments/training/)."),
    ] = None,
    vllm_server_url: Annotated[
        str | None,
        typer.Option(
            help="Base URL of a `trl vllm-serve` server for --generation vllm-server (default: port 8000 on this host)."
        ),
    ] = None,
    eval_suite: Annotated[
        str | None, typer.Option(help="Suite that evaluates a learning-rate sweep [default: heldout].")
    ] = None,
    eval_limit: Annotated[
        int | None, typer.Option(help="Negotiations per arm in a sweep's evaluation (default: the whole suite).")
    ] = None,
    report_to: Annotated[
        list[str] | None,
        typer.Option(
            help="Also report the step metrics (TRL's and the negotiations' own: score, deal rate ...) to tensorboard, "
            "wandb or another of transformers' reporting integrations; repeat for several; all (every installed one) "
            "or none. They always go to OUT/metrics.jsonl. Default: none."
        ),
    ] = None,
    push_to_hub: Annotated[
        bool,
        typer.Option(
            help="When the run ends, push the LoRA adapter, the run's records and a model card to the Hugging Face Hub "
            "(HF_TOKEN or `hf auth login`; HF_ENDPOINT for another hub). Rerun a finished run's command with it to "
            "push that run."
        ),
    ] = False,
    hub_model_id: Annotated[
        str | None,
        typer.Option(help="Repository to push to, NAME or OWNER/NAME. Default: the output folder's name."),
    ] = None,
    hub_private_repo: Annotated[bool, typer.Option(help="Create the hub repository private.")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Train a seller with GRPO on whole negotiations against a training buyer pool.

    The reward is the seller score the evaluation reports (minus a small penalty for invalid
    answers). Each step plays groups of negotiations with the deployed seller agent (prompt,
    parsing, guard), batched into one generate call per turn, and updates a LoRA adapter.
    Outputs: OUT/adapter, OUT/merged, OUT/manifest.json, OUT/episodes.jsonl, OUT/metrics.jsonl
    and OUT/reward_curve.png. Evaluate with `negotiator eval --seller local/OUT --suite heldout`
    (local/OUT serves OUT/merged; local/OUT/adapter serves the adapter on its base).
    """
    from train.config import PROFILES, TEACHERS, resolve
    from train.pool import parse_seed_range

    if profile not in PROFILES:
        raise UsageError(f"--profile {profile!r}: choose cpu or gpu")
    if teacher not in TEACHERS:
        raise UsageError(f"--teacher {teacher!r}: choose {', '.join(TEACHERS[:-1])} or {TEACHERS[-1]}")
    lrs: list[float | None] = [*_parse_lrs(lr)] if lr is not None else [None]  # None: the profile's rate
    if push_to_hub and len(lrs) > 1:
        raise UsageError(
            "--push-to-hub pushes one trained seller: after the sweep, rerun the command of the arm you choose "
            "with --lr RATE --out OUT/lrRATE --push-to-hub"
        )
    if len(lrs) == 1 and (eval_suite is not None or eval_limit is not None):
        raise UsageError(
            "--eval-suite and --eval-limit set how a learning-rate sweep (several --lr) is evaluated; evaluate one "
            f"trained seller with negotiator eval --seller local/{out} --suite SUITE"
        )
    if len(lrs) > 1:  # refused now, not after every arm has trained
        from evals.suites import get_suite

        get_suite(eval_suite or "heldout")
        if eval_limit is not None and eval_limit < 1:
            raise UsageError(f"--eval-limit {eval_limit}: must be at least 1 (leave it out for the whole suite)")
    if from_episodes is not None and from_episodes.is_dir():  # a run's folder: its log
        if not (from_episodes / "episodes.jsonl").is_file():
            raise UsageError(
                f"--from-episodes {from_episodes}: a folder without episodes.jsonl; give a run's folder or a "
                "JSONL file of episodes"
            )
        from_episodes = from_episodes / "episodes.jsonl"
    if from_episodes is not None and not from_episodes.is_file():
        raise UsageError(f"--from-episodes {from_episodes}: no such file")
    options = dict(
        base=base,
        steps=steps,
        max_minutes=max_minutes,
        num_generations=group_size,
        prompts_per_step=prompts_per_step,
        micro_batch=micro_batch,
        max_tokens=max_tokens,
        max_rounds=max_rounds,
        temperature=temperature,
        invalid_penalty=invalid_penalty,
        scale_rewards=scale_rewards,
        train_messages=train_messages,
        strategy=strategy,
        imitate=imitate,
        teacher=teacher,
        teacher_margin=teacher_margin,
        lora_r=lora_r,
        lora_alpha=2 * lora_r,
        lora_layers=lora_layers,
        buyers=buyer,
        buyer_base_url=buyer_base_url,
        personas=persona,
        scenario_seeds=list(parse_seed_range(scenario_seeds)) if scenario_seeds is not None else None,
        from_episodes=from_episodes,
        seed=seed,
        constrain=constrain,
        generation=generation,
        vllm_server_url=vllm_server_url,
        report_to=list(dict.fromkeys(report_to)) if report_to else None,
        push_to_hub=push_to_hub,
        hub_model_id=hub_model_id,
        hub_private_repo=hub_private_repo,
    )
    configs = [
        resolve(cast(Literal["cpu", "gpu"], profile), out=out if len(lrs) == 1 else out / f"lr{x:g}", lr=x, **options)
        for x in lrs
    ]
    for c in configs:  # every refusal before the folder is made
        c.check()
    _check_out(out)

    from train.run import train

    if quiet:  # transformers' own bars too (loading weights, writing model shards)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    if len(configs) == 1:
        try:
            manifest = train(configs[0], console=console, progress=not quiet)
        except KeyboardInterrupt:
            _interrupted(configs[0].out)
        except PushFailed as e:
            console.print(
                f"[bold red]push to the hub failed:[/] {e}. The run is saved in {configs[0].out}; "
                "rerun the same command to push it (nothing is trained again)"
            )
            raise typer.Exit(1) from None
        except TrainingFailed as e:
            _stopped(e, configs[0].out)
        _summary(manifest, configs[0].out)
        return
    from train.sweep import SweepFailed, sweep

    try:
        result = sweep(
            configs, out, eval_suite=eval_suite or "heldout", eval_limit=eval_limit, console=console, progress=not quiet
        )
    except KeyboardInterrupt:
        _interrupted(out)
    except SweepFailed as e:
        console.print(f"[bold red]sweep stopped:[/] {e}")
        raise typer.Exit(1) from None
    except TrainingFailed as e:
        _stopped(e, out)
    console.print(f"comparison report: {result['report']}/report.html (summary.json beside it)")


def _interrupted(out: Path) -> NoReturn:
    """Ctrl-C: say how to resume, then exit at once (130), even while the step's negotiations are unfinished (their
    tracebacks at Python's exit were hundreds of lines after 'interrupted'). Nothing is lost: the run resumes from
    its checkpoint."""
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third Ctrl-C while this is said changes nothing
    console.print(f"rerun the same command to resume {out} from its last checkpoint")
    err_console.print("interrupted")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _stopped(e: TrainingFailed, out: Path) -> NoReturn:
    """A step with nothing to learn from (a broken buyer, a server gone): one line, not a traceback (exit 1)."""
    console.print(
        f"[bold red]training stopped:[/] {escape(str(e))}. Its checkpoints are kept in {out}: fix the cause and rerun "
        "the same command to resume"
    )
    raise typer.Exit(1) from None


def _summary(manifest: dict, out: Path) -> None:
    final, best = manifest.get("final_reward"), manifest.get("best_reward")
    shown = (
        "-"
        if final is None
        else f"{final:+.3f} (best {best:+.3f}, last-5 average {manifest.get('final_reward_avg5'):+.3f})"
    )
    console.print(
        f"trained {manifest['steps']} step{'' if manifest['steps'] == 1 else 's'} of {manifest['base_model']} at lr {manifest['learning_rate']:g}; "
        f"final reward {shown}\n"
        f"adapter:      {out / 'adapter'}\nmerged model: {out / 'merged'}\nmanifest:     {out / 'manifest.json'}\n"
        f"reward curve: {out / 'reward_curve.png'}\n"
        + (
            f"stopped:      at the training-time budget (--max-minutes), {manifest['steps']} of "
            f"{manifest['max_steps']} steps; rerun with a larger --max-minutes to train on\n"
            if manifest.get("stopped_by_time_limit") and manifest["steps"] < manifest.get("max_steps", 0)
            else ""
        )
        + (f"reported to:  {', '.join(manifest['report_to'])}\n" if manifest.get("report_to") else "")
        + (
            f"pushed to:    {manifest['hub']['url']} (commit {manifest['hub']['commit'][:12]})\n"
            if manifest.get("hub")
            else ""
        )
        + f"evaluate:     negotiator eval --seller local/{out} --suite heldout   (serves OUT/merged)"
    )
