"""Named, versioned evaluation suites and the seed ranges they draw from.

A suite is reproducible from its definition alone: the scenario seeds, templates and
buyers are fixed here, and the scenario generator is deterministic. Training draws its
scenarios from ``TRAIN_SEEDS`` only; no evaluation suite may touch that range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from negotiator.domain.generator import GENERATOR_VERSION, generate, template_names
from negotiator.domain.scenario import Scenario
from negotiator.errors import UsageError

TRAIN_SEEDS = range(0, 1_000_000)
"""Scenario seeds reserved for training. Evaluation suites start at 10,000,000."""

EVAL_SEED_BASE = 10_000_000


@dataclass(frozen=True)
class Suite:
    name: str
    version: int
    description: str
    scenario_seeds: tuple[int, ...]
    buyers: tuple[str, ...]  # default evaluation buyers (specs); --buyer replaces them
    templates: tuple[str | None, ...] = ()  # per scenario seed; empty = drawn from the seed
    max_rounds: int | None = None
    personas: tuple[str, ...] = ("neutral",)
    extra: dict = field(default_factory=dict)

    def scenarios(self) -> list[Scenario]:
        templates = self.templates or (None,) * len(self.scenario_seeds)
        return [generate(seed, t, max_rounds=self.max_rounds) for seed, t in zip(self.scenario_seeds, templates)]

    @property
    def key(self) -> str:
        """Identifies the suite's content in episode ids: name, version and generator version."""
        return f"{self.name}@v{self.version}.g{GENERATOR_VERSION}"


def _quick() -> Suite:
    names = template_names()
    return Suite(
        name="quick",
        version=1,
        description="One scenario per product template x four rule-based buyers: 24 negotiations, a minute's check.",
        scenario_seeds=tuple(EVAL_SEED_BASE + i for i in range(len(names))),
        templates=tuple(names),
        buyers=("rule/boulware", "rule/conceder", "rule/tit_for_tat", "rule/threatener"),
        max_rounds=5,
    )


SUITES: dict[str, Suite] = {s.name: s for s in [_quick()]}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}; choose one of {', '.join(SUITES)}") from None


def check_train_seeds(seeds) -> None:
    """Refuse any seed that an evaluation suite uses (or that lies outside the train range)."""
    eval_seeds = {s for suite in SUITES.values() for s in suite.scenario_seeds}
    bad = sorted({s for s in seeds if s in eval_seeds or s not in TRAIN_SEEDS})
    if bad:
        raise UsageError(
            f"scenario seeds {bad[:5]}{'...' if len(bad) > 5 else ''} are not training seeds: training draws from "
            f"{TRAIN_SEEDS.start}..{TRAIN_SEEDS.stop - 1}, which no evaluation suite touches"
        )
