"""The training buyer pool: who the seller practises against, and on which scenarios.

By default the pool is rule-based (no model, no network): time-dependent and threatening
tactics with parameter values that no evaluation buyer uses, each playing one of a few
*training* personas (utility emphasis and reservation shift, as the evaluation personas
do, but different ones). The held-out suite's buyers (``rule/persona`` with the twelve
evaluation personas, and the behaviour-dependent ``rule/tit_for_tat``) never appear in
training. Named LLM buyers (``--buyer openai/gpt-4o-mini``, ``--buyer hosted_vllm/...``)
replace the default pool; they play the same personas through their style prompt.

Scenario seeds come from the training range only (``negotiator.domain.seeds.TRAIN_SEEDS``); a seed
any evaluation suite uses is refused.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from negotiator.buyers.personas import NEUTRAL, Persona, persona_scenario
from negotiator.domain.generator import generate
from negotiator.domain.scenario import Scenario
from negotiator.domain.seeds import TRAIN_SEEDS, check_train_seeds
from negotiator.errors import UsageError
from negotiator.models.families import model_family
from negotiator.models.specs import parse_spec
from negotiator.party import Party
from negotiator.runtime import make_party

DEFAULT_TACTICS = (
    "rule/boulware?e=0.25",
    "rule/boulware?e=0.6",
    "rule/linear?e=1.5",
    "rule/conceder?e=1.5",
    "rule/conceder?e=3",
    "rule/hardliner?level=0.75",
    "rule/threatener?patience=3",
)
"""Default training buyers: parameters chosen apart from every evaluation persona's tactic."""

TRAIN_PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in [
        NEUTRAL,
        Persona(
            "train_price_focused",
            "Price-focused buyer (training)",
            "Price is what you care about most. Push it down steadily and give up extras first.",
            "linear",
            {"price": 1.6},
            0.05,
        ),
        Persona(
            "train_service_focused",
            "Service-focused buyer (training)",
            "You care about service and extras more than the last dollar. Ask for them and trade price for them.",
            "linear",
            {"quality": 1.8, "price": 0.8},
            0.0,
        ),
        Persona(
            "train_fast_delivery",
            "Delivery-focused buyer (training)",
            "You need this soon. Press for fast delivery; you are flexible on the rest.",
            "linear",
            {"delivery": 1.8},
            -0.05,
        ),
        Persona(
            "train_terms_focused",
            "Terms-focused buyer (training)",
            "Payment terms and volume matter to your business. Negotiate those hard and be reasonable on price.",
            "linear",
            {"payment": 1.8, "quantity": 1.3},
            0.0,
        ),
    ]
}
"""Training personas: none is an evaluation persona (the neutral buyer excepted)."""


@dataclass(frozen=True)
class BuyerPool:
    """Buyer specs x personas, and the scenario seeds training draws from."""

    buyers: tuple[str, ...] = DEFAULT_TACTICS
    personas: tuple[str, ...] = tuple(TRAIN_PERSONAS)
    scenario_seeds: tuple[int, ...] = ()
    max_rounds: int | None = None  # shorter negotiations for a CPU (None: the template's)
    buyer_base_url: str | None = None
    extra_personas: dict[str, Persona] = field(default_factory=dict)

    def __post_init__(self):
        if not self.buyers:
            raise UsageError("the training buyer pool is empty; name at least one --buyer")
        for spec in self.buyers:
            s = parse_spec(spec)
            if s.kind == "human":
                raise UsageError("a human cannot be a training buyer")
            if s.kind in ("mcp", "a2a"):
                raise UsageError(
                    f"--buyer {spec}: a seller served elsewhere cannot be a training buyer; train against rule/..., "
                    "scripted/..., local/... or an LLM buyer (openai/..., hosted_vllm/... with --buyer-base-url)"
                )
            if s.kind == "rule" and s.name == "persona":
                raise UsageError(
                    "rule/persona plays the evaluation personas of the held-out suite; train against other buyers "
                    "(the default pool, or rule/<tactic>?<params>)"
                )
            # Every buyer is made once now, so a typo or an unknown parameter is refused before the model loads
            # and before the run's folder is written (scripted/nosuch was refused only at the first rollout, and
            # the folder then held a run with that buyer, which a corrected rerun was refused to resume).
            make_party(spec, "buyer", base_url=self.base_url(spec))
        kinds = {parse_spec(b).kind for b in self.buyers}
        if self.buyer_base_url and kinds <= {"rule", "plugin"}:
            what = "rule-based" if kinds == {"rule"} else "rule-based or a plugin"
            raise UsageError(
                f"--buyer-base-url {self.buyer_base_url} serves LLM training buyers, and every training buyer here is "
                f"{what}: add --buyer hosted_vllm/MODEL (the model that server serves), or leave --buyer-base-url "
                "out"
            )
        unknown = [p for p in self.personas if p not in self.persona_table]
        if unknown:
            raise UsageError(
                f"unknown training persona(s) {', '.join(unknown)}; known: {', '.join(self.persona_table)}"
            )
        if not self.scenario_seeds:
            raise UsageError("the training pool needs scenario seeds")
        check_train_seeds(self.scenario_seeds)
        if self.max_rounds is not None and not 1 <= self.max_rounds <= 100:
            raise UsageError("--max-rounds must be between 1 and 100")

    @property
    def persona_table(self) -> dict[str, Persona]:
        return {**TRAIN_PERSONAS, **self.extra_personas}

    @property
    def families(self) -> list[str]:
        return sorted({model_family(b) for b in self.buyers})

    def scenario(self, seed: int, persona: str) -> Scenario:
        base = generate(seed, max_rounds=self.max_rounds)
        return persona_scenario(base, self.persona_table[persona])

    def base_url(self, spec: str) -> str | None:
        """The server of ``spec``: ``buyer_base_url`` for a model, none for a rule or plugin buyer (which take none)."""
        return None if parse_spec(spec).kind in ("rule", "plugin") else self.buyer_base_url

    def buyer(self, spec: str, persona: str, seed: int) -> Party:
        """A fresh buyer for one negotiation (rule buyers are seeded; LLM buyers get the persona's style)."""
        p = self.persona_table[persona]
        return make_party(spec, "buyer", seed=seed, base_url=self.base_url(spec), instructions=p.style)

    def draw(self, n: int, seed: int = 0) -> list[tuple[int, str, str]]:
        """``n`` (scenario seed, buyer spec, persona) triples: scenarios in order, buyers and personas at random."""
        rng = random.Random(f"negotiator-train-pool-{seed}")
        seeds = [self.scenario_seeds[i % len(self.scenario_seeds)] for i in range(n)]
        return [(s, rng.choice(self.buyers), rng.choice(self.personas)) for s in seeds]

    def describe(self) -> dict:
        """What the manifest records about the pool."""
        return {
            "buyer_pool": list(self.buyers),
            "buyer_pool_families": self.families,
            "buyer_pool_personas": list(self.personas),
            "scenario_seeds": list(self.scenario_seeds),
            "max_rounds": self.max_rounds,
        }


def parse_seed_range(text: str) -> tuple[int, ...]:
    """``--scenario-seeds``: ``A-B`` (inclusive) or ``A,B,C``, training seeds only."""
    text = text.strip()
    seeds: range | tuple[int, ...]
    try:
        if "-" in text and "," not in text:
            a, b = (int(x) for x in text.split("-", 1))
            if b < a:
                raise ValueError
            seeds = range(a, b + 1)
        else:
            seeds = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--scenario-seeds {text!r}: write A-B (inclusive) or A,B,C with integers") from None
    if not seeds:
        raise UsageError("--scenario-seeds names no seed")
    # A range by its ends, before it is built: 0-99999999999 ran out of memory (MemoryError's traceback)
    check_train_seeds([seeds[0], seeds[-1]] if isinstance(seeds, range) else seeds)
    return tuple(seeds)


__all__ = ["BuyerPool", "DEFAULT_TACTICS", "TRAIN_PERSONAS", "TRAIN_SEEDS", "parse_seed_range"]
