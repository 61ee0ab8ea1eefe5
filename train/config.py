"""The configuration of a training run, and the two profiles that fill in its defaults.

``cpu``: the embedded Gemma 3 270M on a laptop-class CPU: small groups, full-length
negotiations, short turns, LoRA on the upper layers only (the backward pass stops there),
``use_cpu``, and the learning rate that moved the 270M's LoRA in 30 updates here (6e-4;
docs/results.md: 1e-4 did not move it, and a 4-round cap made every deal a capitulation).
``gpu``: bf16 on accelerators, larger groups, full-length negotiations, generation by vLLM
(colocated, or a ``trl vllm-serve`` server; see deployments/training/), the paper's rate
(3e-6; sweep 1e-6,3e-6).

A run's resolved configuration is written to ``OUT/config.json``: rerunning the same
command into the same folder resumes it; a different one is refused. Where the metrics are
reported (``report_to``) and whether the adapter is pushed to a hub change nothing a run
trains, so they may differ on a rerun.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from negotiator.domain.seeds import TRAIN_SEEDS
from negotiator.errors import UsageError

from .base_model import EMBEDDED_BASE

Profile = Literal["cpu", "gpu"]
TEACHER_MARGIN = 0.1  # the lookahead teacher's default margin (train.lookahead.MARGIN says why)
Teacher = Literal["strategy", "lookahead", "reader"]  # who plays the --imitate negotiations
TEACHERS: tuple[str, ...] = get_args(Teacher)

TRAIN_STRATEGY = "boulware?candidates=3"

PROFILES: dict[str, dict] = {
    "cpu": {
        "lr": 6e-4,
        "num_generations": 4,
        "prompts_per_step": 2,
        "micro_batch": 2,
        "max_tokens": 128,
        "max_rounds": None,  # the scenario's own: the held-out negotiations run 5-10 rounds
        "lora_layers": 6,
        "dtype": "auto",  # bf16 where the CPU multiplies it natively, float32 elsewhere (cpu_dtype)
        "save_steps": 5,
        "generation": "transformers",
    },
    "gpu": {
        "lr": 3e-6,
        "num_generations": 8,
        "prompts_per_step": 8,
        "micro_batch": 8,
        "max_tokens": 256,
        "max_rounds": None,
        "lora_layers": None,
        "dtype": "bfloat16",
        "save_steps": 25,
        "generation": "vllm-colocate",
    },
}

# What identifies a run: a folder holding a run with other values is refused, not resumed.
RUN_KEYS = (
    "base",
    "lr",
    "profile",
    "num_generations",
    "prompts_per_step",
    "max_tokens",
    "max_rounds",
    "temperature",
    "invalid_penalty",
    "lora_r",
    "lora_alpha",
    "lora_layers",
    "buyers",
    "personas",
    "scenario_seeds",
    "from_episodes",
    "seed",
    "constrain",
    "dtype",
    "generation",
    "scale_rewards",
    "train_messages",
    "strategy",
    "imitate",
    "teacher",
    "teacher_margin",
)
# What a run folder written before a key existed ran with (it is resumed, not refused).
RUN_KEY_DEFAULTS = {
    "scale_rewards": "group",
    "train_messages": True,
    "strategy": "none",
    "imitate": 0,
    "teacher": "strategy",
    "teacher_margin": TEACHER_MARGIN,
}


class TrainConfig(BaseModel):
    # nan and inf are refused for every number (--temperature inf, --max-minutes inf ... are bad input)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    out: Path
    base: str = EMBEDDED_BASE
    lr: float = Field(3e-6, gt=0, lt=1)
    steps: int = Field(30, ge=0)  # 0: the imitation warm start only
    max_minutes: float | None = Field(
        None, gt=0, description="stop after this much training time (steps so far are kept)"
    )
    profile: Profile = "cpu"
    num_generations: int = Field(4, ge=2, description="GRPO group size: negotiations per prompt")
    prompts_per_step: int = Field(2, ge=1)
    micro_batch: int = Field(2, ge=1, description="sequences per forward/backward pass")
    max_tokens: int = Field(96, ge=8, description="token limit of one seller turn")
    max_rounds: int | None = Field(None, ge=1, le=100, description="cap on rounds of training negotiations")
    temperature: float = Field(1.0, gt=0)
    invalid_penalty: float = Field(0.1, ge=0)
    # GRPO's advantage is (reward - group mean) / std. Per group ("group", TRL's default), a
    # group whose rewards differ by 0.01 (a deal at the floor against no deal) gets the same
    # full-size advantages as one that differs by 0.5; a quarter of our CPU runs' groups were
    # like that. "batch" divides by the std of the whole step, so each group pushes in
    # proportion to what is really at stake in it (the Dr. GRPO critique of per-group std).
    scale_rewards: Literal["group", "batch", "none"] = "batch"
    # Whether the loss reads the words of the seller's messages. Rule-based buyers read only
    # the terms, so against them a message cannot change the reward and its tokens (most of
    # an answer) only add noise to the gradient; an LLM buyer reads it. None: True exactly
    # when the pool has a buyer that is not rule-based (resolved in ``resolve``).
    train_messages: bool | None = None
    # The seller that plays the rollouts: the assisted seller (a strategy, with its settings
    # as in a seller spec), whose model learns which of the strategy's offers to pick, when to
    # accept and what to say; or "none", the pure LLM policy that writes its own terms (what
    # docs/results.md trained). The default opens three candidates: with the deployed one, the
    # strategy sets every move and the reward could not tell a group's negotiations apart.
    strategy: str = TRAIN_STRATEGY
    # The imitation warm start (train.imitate): negotiations played by the strategy's own
    # recommendation that the adapter learns to answer like before GRPO starts (0: none).
    imitate: int = Field(0, ge=0)
    # Who plays those negotiations: the strategy's own move on every turn, the lookahead
    # teacher (train.lookahead: every open move played out against the training buyer), or
    # the reader teacher (train.reading: the strategy's move had it read every phrasing).
    teacher: Teacher = "strategy"
    # How much more another move must be worth, played out, than the strategy's own for the
    # lookahead teacher to make it (train.lookahead.MARGIN).
    teacher_margin: float = Field(TEACHER_MARGIN, ge=0, le=1)
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_layers: int | None = Field(None, ge=1, description="adapt only the top N decoder layers (None: all)")
    buyers: list[str] | None = None  # None: the default rule-based pool
    buyer_base_url: str | None = None
    personas: list[str] | None = None  # None: every training persona
    scenario_seeds: list[int] = Field(default_factory=list)
    from_episodes: Path | None = None
    seed: int = Field(0, ge=0, le=2**32 - 1)  # what numpy seeds with (TRL seeds it): -1 failed after the model loaded
    constrain: bool = True
    dtype: str = "bfloat16"
    save_steps: int = Field(5, ge=1)
    generation: Literal["transformers", "vllm-colocate", "vllm-server"] = "transformers"
    vllm_server_url: str | None = None  # a `trl vllm-serve` server; None: TRL's default (port 8000 on this host)
    instructions: str = ""
    # Where TRL reports the step metrics besides OUT/metrics.jsonl: transformers' reporting
    # integrations (tensorboard, wandb, mlflow, trackio ...), "all" installed ones, or "none".
    report_to: list[str] = Field(default_factory=lambda: ["none"])
    push_to_hub: bool = False  # upload the adapter, its records and a model card when the run ends (train.hub)
    hub_model_id: str | None = None  # None: the output folder's name, under the account of the hub token
    hub_private_repo: bool = False

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, v: str) -> str:
        if v == "auto":
            return cpu_dtype()
        if v not in ("bfloat16", "float32", "float16"):
            raise ValueError("dtype must be bfloat16, float32, float16 or auto")
        return v

    @property
    def generation_batch(self) -> int:
        return self.num_generations * self.prompts_per_step

    @property
    def prompts(self) -> int:
        """The negotiation groups the run plays, one training scenario each (--steps 0, the warm start
        alone, still builds a trainer's one step)."""
        return max(1, self.steps) * self.prompts_per_step

    def check(self) -> None:
        from negotiator.agent.seller import parse_strategy

        processes = os.environ.get("WORLD_SIZE", "1")
        if processes.strip() not in ("", "1"):
            # Under accelerate launch or torchrun every process ran the whole run: each wrote the same metrics,
            # plots, episodes and models, and the second to replace the reward curve stopped on its missing file.
            raise UsageError(
                f"negotiator train runs as one process, and this is one of {processes} (WORLD_SIZE, set by "
                "accelerate launch or torchrun): start it directly, one process on one GPU, with --generation "
                "vllm-server to generate on other GPUs (deployments/training/README.md)"
            )
        plan = parse_strategy(self.strategy)  # an unknown name or setting is a UsageError naming the choices
        if plan is not None and not plan.opens_moves and rule_based(self.buyers):
            raise UsageError(
                f"--strategy {self.strategy} leaves the model no move to choose (one candidate, no leeway, "
                "no walk-away, no own terms) and rule-based buyers read only the terms: every negotiation of a group "
                "would get the same reward, so there would be nothing to learn. Open choices (--strategy "
                f"'{self.strategy.partition('?')[0]}?candidates=3', the default), train against an LLM buyer "
                "(--buyer), or train the pure policy (--strategy none)"
            )
        if self.imitate and plan is None:
            raise UsageError(
                "--imitate teaches the model the strategy's own moves, and --strategy none has no strategy: "
                "give a strategy (--strategy 'responsive?menu=moves&words=strategy') or leave --imitate out"
            )
        if plan is not None and plan.menu == "readings" and self.teacher != "reader":
            raise UsageError(
                "--strategy with menu=readings has the model read the buyer's words, and only the reader teacher "
                "knows what they said: add --teacher reader (with --imitate N)"
            )
        if plan is not None and plan.menu == "readings" and self.steps:
            raise UsageError(
                "the readings menu asks the model afresh each turn, and GRPO here trains one sequence per "
                "negotiation: train it by imitation alone (--steps 0 --imitate N)"
            )
        menus = ("moves", "readings") if self.teacher == "reader" else ("moves",)
        if self.teacher != "strategy" and not (plan is not None and plan.menu in menus):
            raise UsageError(
                f"--teacher {self.teacher} chooses among the strategy's priced moves: give --strategy "
                "'responsive?menu=moves&words=strategy' (with --imitate N)"
            )
        if self.prompts > len(TRAIN_SEEDS):  # each is a prompt of the training set, built before the first step
            raise UsageError(
                f"--steps {self.steps}: {self.steps:,} steps of {self.prompts_per_step} prompts are more negotiation "
                f"groups than the {len(TRAIN_SEEDS):,} training scenarios; give at most "
                f"{len(TRAIN_SEEDS) // self.prompts_per_step:,} steps"
            )
        if self.imitate > len(TRAIN_SEEDS):
            raise UsageError(
                f"--imitate {self.imitate}: more negotiations than the {len(TRAIN_SEEDS):,} training scenarios; give "
                f"at most {len(TRAIN_SEEDS):,}"
            )
        if self.steps == 0 and not self.imitate:
            raise UsageError("--steps 0 trains nothing: give GRPO steps, or --imitate N for the warm start alone")
        if self.teacher != "strategy" and not self.imitate:
            raise UsageError("--teacher says who plays the --imitate negotiations: add --imitate N")
        if self.teacher != "lookahead" and self.teacher_margin != TEACHER_MARGIN:
            raise UsageError("--teacher-margin is the lookahead teacher's: add --teacher lookahead")
        if self.generation_batch % self.micro_batch:
            raise UsageError(
                f"--micro-batch {self.micro_batch} must divide the step's {self.generation_batch} negotiations "
                f"({self.prompts_per_step} prompts x groups of {self.num_generations})"
            )
        if self.profile == "cpu" and self.generation != "transformers":
            raise UsageError("the cpu profile generates with transformers; vLLM needs the gpu profile")
        if self.vllm_server_url and self.generation != "vllm-server":
            raise UsageError("--vllm-server-url needs --generation vllm-server (and the gpu profile)")
        check_reporters(self.report_to)
        if (self.hub_model_id or self.hub_private_repo) and not self.push_to_hub:
            raise UsageError("--hub-model-id and --hub-private-repo say where to push: add --push-to-hub")

    def run_key(self) -> dict:
        data = self.model_dump(mode="json")
        return {k: data[k] for k in RUN_KEYS}


# The package each reporter needs, where its name is not the integration's (pip install NAME).
_REPORTER_PACKAGES = {"tensorboard": "tensorboard", "comet_ml": "comet-ml", "azure_ml": "azureml-core"}


def check_reporters(names: list[str]) -> None:
    """Refuse a reporter transformers does not know, or one whose package is missing, before any work starts
    (transformers would fail at the trainer's start, after the model has loaded)."""
    from transformers.integrations.integration_utils import (
        INTEGRATION_TO_CALLBACK,
        get_available_reporting_integrations,
    )

    known = ["none", "all", *INTEGRATION_TO_CALLBACK]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--report-to {unknown[0]}: choose from {', '.join(known)}")
    if "none" in names and len(names) > 1:
        raise UsageError("--report-to none reports nowhere: give it alone, or drop it")
    available = set(get_available_reporting_integrations())
    for n in names:
        if n not in ("none", "all") and n not in available:
            raise UsageError(
                f"--report-to {n}: its package is not installed; pip install {_REPORTER_PACKAGES.get(n, n)}"
            )


# The flag of a field whose name is not the flag's (the others: --field-name).
_FLAGS = {"num_generations": "--group-size", "buyers": "--buyer", "personas": "--persona", "lora_alpha": "--lora-r"}


def flag(name: str) -> str:
    """The command-line flag of a config field: ``--group-size`` for ``num_generations`` ..."""
    return _FLAGS.get(name, "--" + name.replace("_", "-"))


def setting_text(name: str, value) -> str:
    """A recorded setting as a user gives it: seeds as ranges (``0-59``, not sixty numbers), lists joined."""
    if value is None:
        return "the default"
    if isinstance(value, bool):
        return "on" if value else "off"
    if name == "scenario_seeds" and isinstance(value, list) and all(type(x) is int for x in value):
        runs: list[list[int]] = []
        for x in value:
            if runs and x == runs[-1][-1] + 1:
                runs[-1].append(x)
            else:
                runs.append([x])
        return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    if isinstance(value, list):
        return ", ".join(str(x) for x in value)
    return str(value)


def option_errors(e: ValidationError) -> str:
    """What is wrong with the options, flag by flag: ``--steps -1: should be greater than or equal to 0``
    (pydantic's own message named the field, its error type and a web page)."""
    said = {}
    for err in e.errors():
        name = str(err["loc"][0]) if err["loc"] else ""
        named = flag(name)
        if named in said:  # --lora-r 0 also makes lora_alpha (2 x r) 0: one message
            continue
        value = err.get("input")
        shown = "" if isinstance(value, dict) else f" {value}"
        said[named] = f"{named}{shown}: {err['msg'].removeprefix('Input ').removeprefix('Value error, ')}"
    return "; ".join(said.values())


def rule_based(buyers: list[str] | None) -> bool:
    """Whether every training buyer is rule-based (None: the default pool, which is)."""
    return all(b.startswith("rule/") for b in buyers or [])


def cpu_dtype() -> str:
    """What ``auto`` trains in on this machine: bfloat16 where oneDNN has bf16 matrix kernels
    (AVX-512 BF16, AMX), float32 elsewhere. Without them torch emulates bf16: a forward and
    backward pass of the 270M over 512 tokens took 43 s in bf16 against 2.0 s in float32 on
    an AVX2 machine here (docs/training.md, "Profiles"). The recorded config holds the dtype
    it resolved to."""
    from negotiator.models.local.engine import bf16_native  # the check the local server serves by

    return "bfloat16" if bf16_native() else "float32"


def resolve(profile: Profile, **given) -> TrainConfig:
    """A config for ``profile`` with the options the user gave (None: the profile's default;
    0 for ``max_rounds`` or ``lora_layers``: no cap; no ``scenario_seeds``: one per prompt, and
    at least one per ``imitate`` negotiation, from 0)."""
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}; choose cpu or gpu")
    values = {**PROFILES[profile], **{k: v for k, v in given.items() if v is not None}}
    for cap in ("max_rounds", "lora_layers"):  # an explicit 0 means no cap
        if values.get(cap) == 0:
            values[cap] = None
    if values.get("train_messages") is None:
        values["train_messages"] = not rule_based(values.get("buyers"))
    try:
        cfg = TrainConfig(profile=profile, **values)
    except ValidationError as e:
        raise UsageError(option_errors(e)) from None
    cfg.check()
    if not cfg.scenario_seeds:  # one scenario per prompt, and at least one per --imitate negotiation, from 0
        cfg.scenario_seeds = list(range(max(cfg.prompts, cfg.imitate)))
    return cfg


__all__ = [
    "TrainConfig",
    "PROFILES",
    "TEACHERS",
    "RUN_KEYS",
    "RUN_KEY_DEFAULTS",
    "TRAIN_STRATEGY",
    "check_reporters",
    "resolve",
]
