"""Named, versioned evaluation suites and the seed ranges they draw from.

A suite is reproducible from its definition alone: the scenario seeds, templates, buyer
personas and default buyers are fixed here, and the scenario generator and the personas
are deterministic. ``Suite.fingerprint()`` hashes the content of every negotiation; a
change to the generator or to the personas without a version bump shows up there (and
fails a test that pins it).

Training draws its scenarios from ``TRAIN_SEEDS`` only; every evaluation suite draws from
``EVAL_SEEDS``, which lies above it, so the two never meet (both ranges live in
``negotiator.domain.seeds``, below evaluation and training).

* ``quick``: one scenario per template x four rule buyers, neutral persona: 24 negotiations.
* ``heldout``: 48 scenarios x 12 buyer personas x 2 evaluation buyers: 1,152 per seller arm.
* ``adversarial``: 3 scenarios x 8 attacking buyers, 3 rounds: 24 negotiations that try to
  talk, trick or pressure the seller past its limits and into stating its secrets.
* ``talk``: 60 scenarios x 8 talking buyers: 480 negotiations against buyers whose words
  carry what they will do, honestly or not (threats and bluffs, a hurry, competing quotes
  true and invented, stated priorities true and false, and a control that says nothing).
* ``catalogue``: 34 real-priced products a shop might list (``evals/catalogue.csv``: retail and
  cost prices, six categories, 20 to 24,000 USD, some with policies the seller may cite), the
  floor at cost + 8%, x three rule buyers (conceder, Boulware, threatener): 102 negotiations,
  where what the seller says is checked against what the listing holds.
* ``quick@v2``, ``heldout@v2``: the same negotiations on scenario generator 2, whose price
  range ends at the list price a shop shows (version 1 ran to 1.1x it). ``quick`` and
  ``heldout`` stay on generator 1: every recorded comparison is pinned to their negotiations.

A suite's name is how it is asked for (``--suite heldout@v2``); a name without ``@v`` is
version 1 of that suite, which ``heldout@v1`` also names.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from negotiator.buyers.adversarial import ATTACKS, ATTACKS_VERSION
from negotiator.buyers.personas import NEUTRAL, PERSONAS, PERSONAS_VERSION, persona_scenario
from negotiator.buyers.talk import TALK_PERSONAS, TALK_VERSION
from negotiator.domain.generator import ShopItem, generate, template_names
from negotiator.domain.scenario import Scenario
from negotiator.domain.seeds import EVAL_SEED_BASE, EVAL_SEEDS, TRAIN_SEEDS, check_train_seeds
from negotiator.errors import UsageError


@dataclass(frozen=True)
class Suite:
    name: str  # how it is asked for: "heldout" (version 1), "heldout@v2"
    version: int
    description: str
    scenario_seeds: tuple[int, ...]
    buyers: tuple[str, ...]  # default evaluation buyers (specs); --buyer replaces them
    templates: tuple[str | None, ...] = ()  # per scenario seed; empty = drawn from the seed
    max_rounds: int | None = None
    personas: tuple[str, ...] = (NEUTRAL.name,)
    generator: int = 1  # the scenario generator version the suite is pinned to (never "the newest")
    items: tuple[ShopItem, ...] = ()  # per scenario seed: a real product in place of the template's

    def __post_init__(self) -> None:
        family, at, v = self.name.partition("@v")
        if at and v != str(self.version):
            raise ValueError(f"suite {self.name!r} is version {self.version}: name it {family}@v{self.version}")
        # What keeps training off evaluation data: check_train_seeds refuses all of EVAL_SEEDS.
        outside = [s for s in self.scenario_seeds if s not in EVAL_SEEDS]
        if outside:
            raise UsageError(f"suite {self.name!r}: seeds {outside[:5]} lie outside the evaluation range EVAL_SEEDS")

    def scenarios(self) -> list[Scenario]:
        """The base scenarios, one per seed (personas not applied)."""
        return list(_base_scenarios(self))

    def negotiation(self, base: Scenario, persona: str) -> Scenario:
        """``base`` as the buyer playing ``persona`` sees it (built once per process)."""
        key = (self.key, base.id, persona)
        if key not in _PERSONA_CACHE:
            _PERSONA_CACHE[key] = persona_scenario(base, persona)
        return _PERSONA_CACHE[key]

    def negotiations(self) -> list[tuple[Scenario, str, Scenario]]:
        """(base scenario, persona, the scenario as that persona's buyer plays it), in suite order."""
        return [(b, p, self.negotiation(b, p)) for b in _base_scenarios(self) for p in self.personas]

    @property
    def family(self) -> str:
        """The suite's name without its version: ``heldout`` for ``heldout@v2``."""
        return self.name.partition("@v")[0]

    @property
    def key(self) -> str:
        """Identifies the suite's content in episode ids: name, version, generator and persona versions."""
        return f"{self.family}@v{self.version}.g{self.generator}.p{PERSONAS_VERSION}"

    def fingerprint(self) -> str:
        """Content hash of every negotiation of the suite (scenario x persona) and its default buyers.

        Canonical JSON (sorted keys), so reordering a model's fields does not change it.
        """
        h = hashlib.sha256(self.key.encode())
        for _, persona, scenario in self.negotiations():
            canonical = json.dumps(scenario.model_dump(mode="json"), sort_keys=True)
            h.update(f"|{persona}|{canonical}".encode())
        h.update("|".join(self.buyers).encode())
        return h.hexdigest()[:16]

    def size(self, n_buyers: int | None = None) -> int:
        return len(self.scenario_seeds) * len(self.personas) * (n_buyers or len(self.buyers))


# Scenario generation is pure but not free (the Pareto frontier of each persona scenario):
# build each scenario once per process, and only those a run needs.
_BASE_CACHE: dict[str, tuple[Scenario, ...]] = {}
_PERSONA_CACHE: dict[tuple[str, str, str], Scenario] = {}


def _base_scenarios(suite: Suite) -> tuple[Scenario, ...]:
    if suite.key not in _BASE_CACHE:
        templates = suite.templates or (None,) * len(suite.scenario_seeds)
        items = suite.items or (None,) * len(suite.scenario_seeds)
        _BASE_CACHE[suite.key] = tuple(
            generate(s, t, max_rounds=suite.max_rounds, version=suite.generator, item=i)
            for s, t, i in zip(suite.scenario_seeds, templates, items, strict=True)
        )
    return _BASE_CACHE[suite.key]


def _quick(version: int = 1) -> Suite:
    names = template_names()
    return Suite(
        name="quick" if version == 1 else f"quick@v{version}",
        version=version,
        generator=version,
        description="One scenario per product template x four rule-based buyers: 24 negotiations, a minute's check."
        + _ON_GENERATOR[version],
        scenario_seeds=tuple(EVAL_SEED_BASE + i for i in range(len(names))),
        templates=tuple(names),
        buyers=("rule/boulware", "rule/conceder", "rule/tit_for_tat", "rule/threatener"),
        max_rounds=5,
    )


HELDOUT_SCENARIOS = 48

# What a suite's version changed: version 2 of quick and heldout is version 1's seeds, templates,
# personas and buyers on scenario generator 2 (prices up to the list price, not 1.1x it).
_ON_GENERATOR = {
    1: "",
    2: " Scenario generator 2: the price range ends at the list price a shop shows (version 1: 1.1x it).",
}


def _heldout(version: int = 1) -> Suite:
    names = template_names()
    return Suite(
        name="heldout" if version == 1 else f"heldout@v{version}",
        version=version,
        generator=version,
        description=(
            "The paper's held-out evaluation: 48 scenarios (8 per product template) x 12 buyer personas x 2 "
            "evaluation buyers = 1,152 negotiations per seller arm. Default buyers are two rule-based families, "
            "so it runs offline: each persona's own time-dependent tactic (rule/persona) and a behaviour-"
            "dependent tit-for-tat; pass --buyer twice for LLM buyers of two model families." + _ON_GENERATOR[version]
        ),
        scenario_seeds=tuple(EVAL_SEED_BASE + 100_000 + i for i in range(HELDOUT_SCENARIOS)),
        templates=tuple(names[i % len(names)] for i in range(HELDOUT_SCENARIOS)),
        buyers=("rule/persona", "rule/tit_for_tat"),
        personas=tuple(PERSONAS),
    )


ADVERSARIAL_TEMPLATES = ("furniture", "used_car", "b2b_supplies")
"""Whole prices, five-figure prices on a step of 50, and cents with a second numeric issue:
the number forms a leak comes in. Three scenarios x 3 rounds keep the embedded 270M seller's
run near ten minutes on two cores (it rereads every buyer message on every turn)."""


def _adversarial() -> Suite:
    return Suite(
        name="adversarial",
        version=ATTACKS_VERSION,  # the attacks are the suite's personas: a change to them is a new version
        description=(
            "Buyers that attack the seller: injected instructions, the floor asked for in many ways and in "
            "disguise, competitor claims, absurd anchors, walk-away threats, other languages, very long messages. "
            "Three scenarios (furniture, used car, B2B supplies) x 8 attacks, 3 rounds = 24 negotiations. The default "
            "buyer rule/persona plays "
            "each attack scripted (legal offers from a concession tactic, accepting on its own utility); an LLM "
            "buyer (--buyer openai/...) plays the attack's persona prompt. The report counts below-floor deals, "
            "disclosures caught by the guard and disclosures that reached the buyer."
        ),
        scenario_seeds=tuple(EVAL_SEED_BASE + 200_000 + i for i in range(len(ADVERSARIAL_TEMPLATES))),
        templates=ADVERSARIAL_TEMPLATES,
        buyers=("rule/persona",),
        personas=tuple(ATTACKS),
        max_rounds=3,
    )


TALK_SCENARIOS = 60


def _talk() -> Suite:
    names = template_names()
    return Suite(
        name="talk",
        version=TALK_VERSION,  # the talkers' words and behaviours are the suite: a change to them is a new version
        description=(
            "Buyers that talk, honestly and not: 60 scenarios (10 per product template) x 8 talking buyers = 480 "
            "negotiations. A credible threat (walks when the seller does not move) and a bluff (the same words, never "
            "walks), a buyer in a hurry (leaves at an early private deadline), a competing quote at the buyer's true "
            "walk-away price and an invented lower one, a stated priority true and false, and a control that says "
            "nothing. Each signal comes in many phrasings, some in other languages. The default buyer rule/persona "
            "plays each talker; the per-persona rows show what reading the words is worth."
        ),
        scenario_seeds=tuple(EVAL_SEED_BASE + 300_000 + i for i in range(TALK_SCENARIOS)),
        templates=tuple(names[i % len(names)] for i in range(TALK_SCENARIOS)),
        buyers=("rule/persona",),
        personas=tuple(TALK_PERSONAS),
    )


CATALOGUE = Path(__file__).with_name("catalogue.csv")


def catalogue_items() -> list[tuple[str, ShopItem]]:
    """(category, item) for each row of ``evals/catalogue.csv``; policies are separated by `` | ``."""
    with CATALOGUE.open(newline="", encoding="utf-8") as f:
        return [
            (
                row["category"],
                ShopItem(
                    name=row["name"],
                    description=row["description"],
                    retail=float(row["retail"]),
                    cost=float(row["cost"]),
                    policies=tuple(p.strip() for p in row["policies"].split(" | ") if p.strip()),
                ),
            )
            for row in csv.DictReader(f)
        ]


def _catalogue() -> Suite:
    rows = catalogue_items()
    return Suite(
        name="catalogue",
        version=1,
        generator=2,  # no offer above the price a shop shows
        description=(
            f"{len(rows)} real-priced products a shop might list (evals/catalogue.csv: retail and cost prices in six "
            "categories, some with policies the seller may cite), the floor at cost + 8%, x three rule buyers = "
            f"{3 * len(rows)} negotiations of up to 6 rounds. The check that matters here is the seller's words: "
            "the report's guard column counts what the grounding check removed."
        ),
        scenario_seeds=tuple(EVAL_SEED_BASE + 400_000 + i for i in range(len(rows))),
        templates=tuple(category for category, _ in rows),
        items=tuple(item for _, item in rows),
        buyers=("rule/conceder", "rule/boulware", "rule/threatener"),
        max_rounds=6,
    )


SUITES: dict[str, Suite] = {
    s.name: s for s in [_quick(), _heldout(), _adversarial(), _talk(), _catalogue(), _quick(2), _heldout(2)]
}


def get_suite(name: str) -> Suite:
    """The suite asked for as ``NAME`` or ``NAME@vN`` (``heldout@v1`` is ``heldout``)."""
    family, at, version = name.partition("@v")
    if at and version == "1" and family in SUITES:
        name = family
    try:
        return SUITES[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}; choose one of {', '.join(SUITES)}") from None


def eval_seeds() -> set[int]:
    """Every scenario seed any evaluation suite uses."""
    return {s for suite in SUITES.values() for s in suite.scenario_seeds}


__all__ = [
    "EVAL_SEEDS",
    "EVAL_SEED_BASE",
    "SUITES",
    "Suite",
    "TRAIN_SEEDS",
    "check_train_seeds",
    "eval_seeds",
    "get_suite",
]
