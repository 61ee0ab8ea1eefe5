"""Buyer personas: who the evaluation buyer is, beyond the scenario's numbers.

A persona changes three things about the buyer of a scenario:

* its private **utility**: weight multipliers per aspect (price, delivery, quality, payment,
  quantity), renormalised to sum to 1, so a budget-bound student cares more about price
  and a quality-first buyer more about warranty and support;
* its **reservation** utility (a competing quote raises it, impatience lowers it);
* its **style**: a prompt an LLM buyer reads as private instructions, and a matching
  concession tactic (``tactic``) a rule-based buyer plays when its spec is ``rule/persona``.

``persona_scenario(scenario, persona)`` applies the first two to the scenario itself, so
both kinds of buyer see the same utility through their view, and every metric (buyer
score, Pareto and Nash distance) is computed against the persona's utility. The seller's
side is untouched. A persona scenario keeps a zone of agreement: if the changes close it,
the buyer's reservation is lowered until one opens again.

Changing anything here changes the held-out suite: bump ``PERSONAS_VERSION``.
"""

from __future__ import annotations

from ..domain.metrics import analysis
from ..domain.scenario import Scenario
from ..domain.utility import Preferences
from ..errors import UsageError
from .persona import Persona

PERSONAS_VERSION = 1

# Which aspect an issue of the scenario templates belongs to; unknown issues count as "other".
ASPECTS: dict[str, str] = {
    "delivery_days": "delivery",
    "warranty_months": "quality",
    "inspection": "quality",
    "support": "quality",
    "menu": "quality",
    "accessories": "quality",
    "assembly": "quality",
    "onboarding": "quality",
    "payment_terms": "payment",
    "deposit_percent": "payment",
    "financing": "payment",
    "contract_months": "payment",
    "cancellation": "payment",
    "quantity": "quantity",
    "seats": "quantity",
}


def aspect(issue_name: str) -> str:
    if "price" in issue_name:
        return "price"
    return ASPECTS.get(issue_name, "other")


NEUTRAL = Persona(
    "neutral",
    "Neutral buyer",
    "",
    "linear",
)

PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in [
        Persona(
            "budget_student",
            "Budget-bound student",
            "You are a university student buying on a tight budget. Say so. Be polite but keep pushing the "
            "price down; give up extras and fast delivery before you pay more.",
            "boulware?e=0.3",
            {"price": 2.0, "quality": 0.5, "delivery": 0.7},
            0.05,
        ),
        Persona(
            "procurement_officer",
            "Procurement officer",
            "You are a procurement officer buying for a company. Be formal and methodical, cite purchasing "
            "policy, insist on favourable payment terms and volume, and concede only in small, justified steps.",
            "boulware?e=0.5",
            {"payment": 2.0, "quantity": 1.5, "price": 1.2},
            0.10,
        ),
        Persona(
            "impatient",
            "Impatient buyer",
            "You are in a hurry and want this settled in as few rounds as possible. Keep messages short, "
            "press for quick delivery, and prefer a reasonable deal now to a better one later.",
            "conceder?e=4",
            {"delivery": 2.0},
            -0.10,
        ),
        Persona(
            "friendly_haggler",
            "Friendly haggler",
            "You enjoy haggling and stay warm and good-humoured throughout. Make many small counter-offers, "
            "meet the seller part of the way each time, and ask for a little more every round.",
            "linear",
            {},
            0.0,
        ),
        Persona(
            "aggressive_anchorer",
            "Aggressive anchorer",
            "You open with a very low anchor and defend it hard. Question the seller's price, concede very "
            "little and late, and make the seller do the moving.",
            "boulware?e=0.12",
            {"price": 1.5},
            0.05,
        ),
        Persona(
            "walkaway_threatener",
            "Walk-away threatener",
            "You make it clear you have other options. If the seller does not move, say you are ready to walk "
            "away, and do walk away if they keep stalling.",
            "threatener?patience=1",
            {"price": 1.2},
            0.10,
        ),
        Persona(
            "bundle_seeker",
            "Bundle seeker",
            "You want a package deal. Ask for extras, more units and better service bundled into the price, "
            "and trade price for a richer bundle.",
            "linear?e=0.8",
            {"quantity": 2.0, "quality": 1.8, "price": 0.8},
            0.0,
        ),
        Persona(
            "quality_first",
            "Quality-first buyer",
            "Quality and service matter most to you: warranty, support, inspection, the better option. You "
            "will pay a fair price for them but will not give them up.",
            "linear",
            {"quality": 2.5, "price": 0.5},
            0.0,
        ),
        Persona(
            "cash_flow_manager",
            "Cash-flow-conscious owner",
            "You run a small business and watch cash flow closely. Push for later payment, smaller deposits "
            "and flexible terms; be open on the rest.",
            "linear",
            {"payment": 2.5},
            0.0,
        ),
        Persona(
            "deadline_driven",
            "Deadline-driven planner",
            "You are organising something with a fixed date. Delivery time is critical; you will move on price "
            "to secure it, and you want the deal closed soon.",
            "conceder?e=2",
            {"delivery": 2.5, "price": 0.8},
            -0.05,
        ),
        Persona(
            "comparison_shopper",
            "Comparison shopper",
            "You hold a competing quote and mention it. Compare every offer with it, stay firm, and only accept "
            "terms clearly better than your alternative.",
            "hardliner?level=0.5",
            {"price": 1.3},
            0.15,
        ),
        Persona(
            "loyal_regular",
            "Loyal repeat customer",
            "You have bought from this seller before and want to keep the relationship. Be cooperative and "
            "appreciative, mention your loyalty, and meet the seller halfway readily.",
            "conceder?e=2",
            {"quality": 1.2},
            -0.05,
        ),
    ]
}


def get_persona(name: str) -> Persona:
    if name == NEUTRAL.name:
        return NEUTRAL
    if name in PERSONAS:
        return PERSONAS[name]
    from .adversarial import ATTACKS  # the adversarial suite's attackers (that module imports this one)
    from .talk import TALK_PERSONAS  # the talk suite's talking buyers

    if name in ATTACKS:
        return ATTACKS[name].persona
    if name in TALK_PERSONAS:
        return TALK_PERSONAS[name]
    raise UsageError(
        f"unknown persona {name!r}; choose one of {', '.join(PERSONAS)}, an attack ({', '.join(ATTACKS)}), "
        f"a talker ({', '.join(TALK_PERSONAS)}) or neutral"
    )


def persona_preferences(prefs: Preferences, persona: Persona, reservation: float | None = None) -> Preferences:
    """The buyer's preferences under ``persona``: weights re-emphasised, reservation shifted."""
    raw = {k: w * persona.emphasis.get(aspect(k), 1.0) for k, w in prefs.weights.items()}
    total = sum(raw.values())
    weights = {k: round(v / total, 4) for k, v in raw.items()}
    heaviest = max(weights, key=lambda k: weights[k])  # the rounding remainder goes on the heaviest issue
    weights[heaviest] = round(1.0 - sum(v for k, v in weights.items() if k != heaviest), 4)
    r = prefs.reservation + persona.reservation_shift if reservation is None else reservation
    return Preferences(weights=weights, values=prefs.values, reservation=round(min(0.9, max(0.0, r)), 4))


def persona_scenario(scenario: Scenario, persona: Persona | str) -> Scenario:
    """``scenario`` with its buyer playing ``persona``; id ``<scenario id>~<persona>``."""
    p = get_persona(persona) if isinstance(persona, str) else persona
    if p.name == NEUTRAL.name:
        return scenario
    buyer = persona_preferences(scenario.buyer, p)
    fields = {k: getattr(scenario, k) for k in type(scenario).model_fields}
    out = Scenario(**{**fields, "id": f"{scenario.id}~{p.name}", "buyer": buyer})
    # Keep a zone of agreement (as the generator does): lower the buyer's reservation if needed.
    for _ in range(40):
        if analysis(out).best_joint_margin >= 0.05 or out.buyer.reservation == 0.0:
            break
        lowered = persona_preferences(scenario.buyer, p, reservation=out.buyer.reservation * 0.85 - 0.005)
        out = Scenario(**{**fields, "id": out.id, "buyer": lowered})
    return out


__all__ = [
    "PERSONAS",
    "PERSONAS_VERSION",
    "NEUTRAL",
    "Persona",
    "aspect",
    "get_persona",
    "persona_preferences",
    "persona_scenario",
]
