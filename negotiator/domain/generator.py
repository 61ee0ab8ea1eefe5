"""Seeded scenario generator over product templates.

``generate(seed)`` is a pure function of its arguments: the same seed and template give
the same scenario on every machine (``random.Random`` is stable across platforms). Price
is always opposed; the other issues carry different weights for each side and are
mostly opposed, sometimes aligned, so there is room to trade across issues (logrolling).
Unless ``zopa=False`` is asked, every scenario has a zone of agreement: an outcome both
sides prefer to walking away that also respects the seller's hard limits.

The generator is versioned, and a version, once released, generates the same scenarios
forever: evaluation suites pin the version they were built on (``evals/suites.py``), so
their negotiations never change under them.

* Version 1 (``generate``'s default, which every recorded result, suite and example so far
  was drawn with): the price issue runs from 0.55x to 1.1x a list price with cents ($922.03
  listed, up to $1,014 allowed): a seller could open, and close, above the sticker.
* Version 2 (``version=2``; the ``quick@v2`` and ``heldout@v2`` suites, the example shop):
  the list price is what a shop shows, on the price's own step ($922), and the price range
  ends there (507..922): no offer above the sticker. Everything else is drawn from the same
  random stream as version 1, so a version-2 scenario is its version-1 twin (product,
  weights, option values, reservations, opener, rounds) with that price range.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ..errors import UsageError
from .issues import DiscreteIssue, NumericIssue, OutcomeSpace
from .metrics import analysis
from .scenario import HardLimits, Listing, Product, Scenario
from .utility import LinearValue, Preferences, TableValue

GENERATOR_VERSION = 1
"""The version ``generate`` draws from unless asked for another (what recorded results were drawn with)."""
GENERATOR_VERSIONS = (1, 2)
"""Every released version, oldest first: the last is the newest."""


@dataclass(frozen=True)
class DiscreteSpec:
    name: str
    options: tuple
    seller: tuple[float, ...]  # base value of each option to the seller
    buyer: tuple[float, ...]
    ordered: bool = True
    unit: str = ""


@dataclass(frozen=True)
class NumericSpec:
    """A numeric issue other than price; ``buyer_up`` says whether the buyer wants it higher."""

    name: str
    low: float
    high: float
    step: float
    unit: str
    seller_up: bool
    buyer_up: bool


@dataclass(frozen=True)
class ShopItem:
    """A real product a shop lists, with what it sells for and what it costs the shop.

    ``generate(..., item=...)`` draws everything else from the template (the other issues,
    both sides' weights, the buyer) and takes the product, the price range and the floor
    from here: the range ends at ``retail``, and the floor is ``cost`` plus ``margin``.
    """

    name: str
    description: str
    retail: float
    cost: float
    policies: tuple[str, ...] = ()
    margin: float = 0.08

    def __post_init__(self) -> None:
        if not (math.isfinite(self.retail) and math.isfinite(self.cost) and 0 < self.cost):
            raise UsageError(f"item {self.name!r}: retail and cost must be finite positive prices")
        if self.cost * (1 + self.margin) >= self.retail:
            raise UsageError(
                f"item {self.name!r}: cost {self.cost} plus a {self.margin:.0%} margin is not below retail {self.retail}"
            )


@dataclass(frozen=True)
class Template:
    name: str
    products: tuple[tuple[str, str], ...]  # (name, description)
    list_price: tuple[float, float]
    currency: str = "USD"
    price_name: str = "price"
    price_unit: str = ""
    price_step: float = 1.0
    discrete: tuple[DiscreteSpec, ...] = ()
    numeric: tuple[NumericSpec, ...] = ()
    seller_price_weight: tuple[float, float] = (0.4, 0.65)
    buyer_price_weight: tuple[float, float] = (0.3, 0.55)
    rounds: tuple[int, ...] = (5, 6, 8, 10)
    notes: str = ""
    extra: dict = field(default_factory=dict)


_PAYMENT = DiscreteSpec("payment_terms", ("upfront", "net30", "net60"), (1.0, 0.6, 0.2), (0.2, 0.6, 1.0), ordered=True)

TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in [
        Template(
            "retail_electronics",
            (
                ("15-inch laptop", "A 15-inch laptop, 16 GB RAM, 1 TB SSD, current model year."),
                ("4K television", "A 55-inch 4K OLED television."),
                ("mirrorless camera", "A full-frame mirrorless camera body with a 24-70 mm lens."),
            ),
            (600, 2400),
            discrete=(
                DiscreteSpec("warranty_months", (0, 12, 24), (1.0, 0.7, 0.2), (0.0, 0.6, 1.0), unit="months"),
                DiscreteSpec("delivery_days", (1, 3, 7, 14), (0.0, 0.5, 0.8, 1.0), (1.0, 0.8, 0.4, 0.0), unit="days"),
                DiscreteSpec(
                    "accessories",
                    ("none", "case", "case_and_charger"),
                    (1.0, 0.7, 0.3),
                    (0.0, 0.5, 1.0),
                    ordered=True,
                ),
            ),
        ),
        Template(
            "furniture",
            (
                ("oak dining table", "A solid oak dining table seating eight."),
                ("leather sofa", "A three-seat leather sofa in cognac."),
                ("standing desk", "An electric standing desk, 160 x 80 cm."),
            ),
            (400, 3000),
            discrete=(
                DiscreteSpec("delivery_days", (3, 7, 14, 28), (0.0, 0.4, 0.8, 1.0), (1.0, 0.8, 0.5, 0.0), unit="days"),
                DiscreteSpec("assembly", ("none", "included"), (1.0, 0.0), (0.0, 1.0), ordered=False),
                _PAYMENT,
            ),
        ),
        Template(
            "used_car",
            (
                ("2019 hatchback", "A 2019 compact hatchback, 62,000 km, full service history."),
                ("2017 SUV", "A 2017 mid-size SUV, 98,000 km, new tyres."),
                ("2021 electric sedan", "A 2021 electric sedan, 40,000 km, battery health 93%."),
            ),
            (8000, 32000),
            price_step=50,
            discrete=(
                DiscreteSpec(
                    "warranty_months", (0, 3, 6, 12), (1.0, 0.8, 0.5, 0.0), (0.0, 0.4, 0.7, 1.0), unit="months"
                ),
                DiscreteSpec("inspection", ("as_is", "safety_check", "full_service"), (1.0, 0.6, 0.0), (0.0, 0.5, 1.0)),
                DiscreteSpec("financing", ("cash", "dealer_financing"), (0.5, 1.0), (1.0, 0.3), ordered=False),
            ),
        ),
        Template(
            "b2b_supplies",
            (
                ("copier paper", "A4 copier paper, 80 gsm, per box of 5 reams."),
                ("nitrile gloves", "Nitrile examination gloves, per case of 1,000."),
                ("packaging film", "Stretch packaging film, per roll."),
            ),
            (20, 90),
            price_name="unit_price",
            price_unit="per unit",
            price_step=0.05,
            discrete=(
                DiscreteSpec("delivery_days", (2, 5, 10, 20), (0.0, 0.5, 0.8, 1.0), (1.0, 0.7, 0.3, 0.0), unit="days"),
                _PAYMENT,
            ),
            numeric=(NumericSpec("quantity", 100, 1000, 50, "units", seller_up=True, buyer_up=True),),
            seller_price_weight=(0.35, 0.55),
            buyer_price_weight=(0.35, 0.55),
        ),
        Template(
            "saas_seats",
            (
                ("CRM seats", "Annual per-seat licence for a sales CRM."),
                ("design tool seats", "Per-seat licence for a collaborative design tool."),
                ("analytics platform", "Per-seat licence for a business analytics platform."),
            ),
            (120, 900),
            price_name="price_per_seat",
            price_unit="per seat per year",
            discrete=(
                DiscreteSpec("contract_months", (12, 24, 36), (0.0, 0.6, 1.0), (1.0, 0.6, 0.0), unit="months"),
                DiscreteSpec("support", ("standard", "priority", "dedicated"), (1.0, 0.6, 0.0), (0.0, 0.6, 1.0)),
                DiscreteSpec("onboarding", ("self_serve", "guided"), (1.0, 0.2), (0.1, 1.0), ordered=False),
            ),
            numeric=(NumericSpec("seats", 10, 200, 10, "seats", seller_up=True, buyer_up=False),),
        ),
        Template(
            "event_catering",
            (
                ("wedding catering", "Three-course wedding catering for 120 guests, priced per guest."),
                ("conference lunch", "Buffet lunch for a two-day conference, priced per guest."),
                ("corporate gala", "Plated dinner for a corporate gala, priced per guest."),
            ),
            (35, 160),
            price_name="price_per_guest",
            price_unit="per guest",
            price_step=0.5,
            discrete=(
                DiscreteSpec("menu", ("standard", "premium", "chef_tasting"), (0.3, 1.0, 0.6), (0.0, 0.7, 1.0)),
                DiscreteSpec("deposit_percent", (10, 30, 50), (0.0, 0.6, 1.0), (1.0, 0.5, 0.0), unit="%"),
                DiscreteSpec("cancellation", ("strict", "moderate", "flexible"), (1.0, 0.6, 0.0), (0.0, 0.5, 1.0)),
            ),
        ),
    ]
}


def template_names() -> list[str]:
    return list(TEMPLATES)


def _weights(rng: random.Random, names: list[str], first: str, first_range: tuple[float, float]) -> dict[str, float]:
    w0 = rng.uniform(*first_range)
    rest = [n for n in names if n != first]
    raw = [rng.gammavariate(2.0, 1.0) for _ in rest]
    total = sum(raw)
    weights = {first: w0, **{n: (1 - w0) * r / total for n, r in zip(rest, raw, strict=True)}}
    # Round to keep scenarios readable, then put the rounding remainder on price.
    weights = {k: round(v, 4) for k, v in weights.items()}
    weights[first] = round(1.0 - sum(v for k, v in weights.items() if k != first), 4)
    return weights


def _table(rng: random.Random, options: tuple, base: tuple[float, ...]) -> TableValue:
    noisy = [min(1.0, max(0.0, b + rng.uniform(-0.1, 0.1))) for b in base]
    lo, hi = min(noisy), max(noisy)
    span = (hi - lo) or 1.0
    return TableValue(values={str(o): round((v - lo) / span, 4) for o, v in zip(options, noisy, strict=True)})


def generate(
    seed: int,
    template: str | None = None,
    *,
    zopa: bool = True,
    max_rounds: int | None = None,
    version: int = GENERATOR_VERSION,
    item: ShopItem | None = None,
) -> Scenario:
    """The scenario for ``seed`` (and ``template``; drawn from the seed when omitted), as generator
    ``version`` draws it (see the module docstring for what each version changed). With ``item``,
    a real product's name, prices and policies replace the template's drawn product and price."""
    if version not in GENERATOR_VERSIONS:
        raise UsageError(
            f"unknown scenario generator version {version!r}; choose one of {', '.join(map(str, GENERATOR_VERSIONS))}"
        )
    if template is not None and template not in TEMPLATES:
        raise UsageError(f"unknown scenario template {template!r}; choose one of {', '.join(TEMPLATES)}")
    if seed is None or isinstance(seed, bool):  # each would name a scenario of its own ("furniture-None")
        raise UsageError(f"seed must be a whole number, not {seed!r}")
    if max_rounds is not None and (isinstance(max_rounds, bool) or max_rounds < 1):  # 0 meant the template's
        raise UsageError(f"max_rounds must be 1 or more (or None for the template's own), not {max_rounds!r}")
    # Every version draws version 1's random stream (the "v1" in these names), so versions differ
    # only where their code does.
    if template is None:
        template = random.Random(f"negotiator-template-v1-{seed}").choice(sorted(TEMPLATES))
    # Seeded by (seed, template) only, so generate(s) equals generate(s, its drawn template).
    rng = random.Random(f"negotiator-scenario-v1-{seed}-{template}")
    t = TEMPLATES[template]
    product_name, description = rng.choice(t.products)

    drawn = rng.uniform(*t.list_price)
    if item is not None:  # the stream drew its product and price all the same: the rest stays the template's
        product_name, description, drawn = item.name, item.description, item.retail
    if version == 1:
        list_price, high = round(drawn, 2), _snap(drawn * 1.1, t.price_step)
    else:  # the sticker is on the price's own step, and no offer may ask more than it
        list_price = high = _snap(drawn, t.price_step)
    price = NumericIssue(
        name=t.price_name,
        low=_snap(drawn * 0.55, t.price_step),
        high=high,
        step=t.price_step,
        unit=(f"{t.currency} {t.price_unit}").strip(),
    )
    issues: list = [price]
    s_vals: dict = {price.name: LinearValue(worst=price.low, best=price.high)}
    b_vals: dict = {price.name: LinearValue(worst=price.high, best=price.low)}
    for nspec in t.numeric:
        iss = NumericIssue(name=nspec.name, low=nspec.low, high=nspec.high, step=nspec.step, unit=nspec.unit)
        issues.append(iss)
        s_vals[iss.name] = (
            LinearValue(worst=iss.low, best=iss.high) if nspec.seller_up else LinearValue(worst=iss.high, best=iss.low)
        )
        b_vals[iss.name] = (
            LinearValue(worst=iss.low, best=iss.high) if nspec.buyer_up else LinearValue(worst=iss.high, best=iss.low)
        )
    for spec in t.discrete:
        issues.append(DiscreteIssue(name=spec.name, options=spec.options, ordered=spec.ordered, unit=spec.unit))
        s_vals[spec.name] = _table(rng, spec.options, spec.seller)
        b_vals[spec.name] = _table(rng, spec.options, spec.buyer)

    names = [i.name for i in issues]
    s_w = _weights(rng, names, price.name, t.seller_price_weight)
    b_w = _weights(rng, names, price.name, t.buyer_price_weight)
    # The business's price floor: below it the sale loses money, whatever else is agreed.
    floor = _snap(price.low + (price.high - price.low) * rng.uniform(0.05, 0.25), t.price_step)
    if item is not None:  # the shop's own floor: its cost plus its margin, on the price's step, rounded up
        floor = _snap(math.ceil(item.cost * (1 + item.margin) / t.price_step - 1e-9) * t.price_step, t.price_step)
        if floor < price.low:
            price = NumericIssue.model_validate({**price.model_dump(), "low": floor})
            issues[0] = price
            s_vals[price.name] = LinearValue(worst=price.low, best=price.high)
            b_vals[price.name] = LinearValue(worst=price.high, best=price.low)
    limits = HardLimits(minimum={price.name: floor})
    r_s, r_b = rng.uniform(0.15, 0.45), rng.uniform(0.15, 0.45)
    rounds = max_rounds or rng.choice(t.rounds)
    opener = rng.choice(["seller", "buyer"])

    scenario_id = f"{t.name}-{seed}" + ("" if zopa else "-nozopa") + (f"-r{max_rounds}" if max_rounds else "")

    def build(rs: float, rb: float) -> Scenario:
        return Scenario(
            id=scenario_id,
            template=t.name,
            product=Product(
                name=product_name,
                description=description,
                list_price=list_price,
                policies=item.policies if item is not None else (),
            ),
            currency=t.currency,
            issues=tuple(issues),
            seller=Preferences(weights=s_w, values=s_vals, reservation=round(rs, 4)),
            buyer=Preferences(weights=b_w, values=b_vals, reservation=round(rb, 4)),
            seller_limits=limits,
            opener=opener,
            max_rounds=rounds,
            seed=seed,
        )

    # Adjust reservations (deterministically) until the zone of agreement is as asked.
    scenario = build(r_s, r_b)
    for _ in range(60):
        margin = analysis(scenario).best_joint_margin
        if zopa and margin >= 0.05:
            return scenario
        if not zopa and margin < 0:
            return scenario
        if zopa:
            r_s, r_b = r_s * 0.85, r_b * 0.85
        else:
            r_s, r_b = min(0.95, r_s + 0.05), min(0.95, r_b + 0.05)
        scenario = build(r_s, r_b)
    raise AssertionError(f"could not shape scenario {seed} ({t.name}) as asked (zopa={zopa})")


def example_listing(seed: int = 0, template: str | None = None, *, max_rounds: int | None = None) -> Listing:
    """A ready-made listing from one of the built-in templates (``template_names()``): the
    seller's side of ``generate(seed, template)``, all an app needs to try a seller."""
    return generate(seed, template, max_rounds=max_rounds).listing()


def _snap(x: float, step: float) -> float:
    v = round(round(x / step) * step, 6)
    return int(v) if float(step).is_integer() else v


def has_zopa(scenario: Scenario) -> bool:
    """True when some outcome beats both reservations and respects the seller's limits."""
    return analysis(scenario).best_joint_margin > 0


__all__ = [
    "GENERATOR_VERSION",
    "GENERATOR_VERSIONS",
    "TEMPLATES",
    "example_listing",
    "generate",
    "has_zopa",
    "template_names",
    "OutcomeSpace",
]
