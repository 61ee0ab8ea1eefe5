"""The reader teacher: each decision of a demonstration is the move the strategy makes when it
reads every phrasing the buyer used.

The keyword reader misses about half of what the talking buyers say (idioms it has no pattern
for, languages it does not know; docs/strategy.md), and a strategy that read every phrasing,
believing it no more than the keyword reader does, scores +0.019 over it on ``talk``
(``oracle/said`` in ``benchmarks/strategy_arms.py``). That is what a model reading the words
can add over a regex, and unlike the lookahead teacher's gains it depends on nothing the
decision view hides: the words are in the view. ``--teacher reader`` labels each turn with that
strategy's move (``negotiator.buyers.talk.said_hints``: the talker's own rules replayed on the
transcript), expressed as a choice of the menu the model is shown (priced with the keyword
reader's hints): the choice with the same terms, else of the same name, else the offering
choice nearest in worth. Where the keyword reader read what was said, that is the strategy's
own move; for a buyer that says nothing of itself, always.
"""

from __future__ import annotations

from dataclasses import dataclass

from negotiator.buyers.talk import TALK, said_hints, said_reading
from negotiator.domain.scenario import Scenario
from negotiator.party import PartyView
from negotiator.strategy import ACCEPT, Advice, Strategy

from .lookahead import open_choices
from .tasks import Task


def talker(task: Task) -> str | None:
    """The talking buyer's name a training task plays (``rule/bluff``, or the ``talk`` suite's
    ``rule/persona`` under a talker's persona), else None."""
    name = task.buyer.split("?")[0].removeprefix("rule/")
    if name in TALK:
        return name
    return task.persona if name == "persona" and task.persona in TALK else None


@dataclass
class Reading:
    """Chooses each move of one training negotiation as the strategy reading every phrasing would."""

    strategy: Strategy
    task: Task
    scenario: Scenario

    async def choose(self, view: PartyView, advice: Advice) -> str:
        name = talker(self.task)
        if name is None:
            return "none" if advice.menu == "readings" else advice.recommended
        hints = said_hints(self.scenario, name, self.task.seed, view)
        if advice.menu == "readings":
            return said_reading(hints, [r.id for r in advice.readings])
        read = self.strategy.advise(view.situation(), hints=hints)
        return menu_choice(advice, read)


def menu_choice(advice: Advice, read: Advice) -> str:
    """``read``'s recommended move as a choice of ``advice``'s menu (see the module)."""
    open_ = open_choices(advice)
    if read.recommended == ACCEPT:
        return ACCEPT if ACCEPT in open_ else advice.recommended
    terms = read.offer.terms
    same = advice.choice_of(terms)
    if same is not None:
        return same
    if read.offer.id in advice.choices:
        return read.offer.id
    worth = read.offer.worth
    return min(advice.choices, key=lambda c: abs(advice.candidate(c).worth - worth), default=advice.recommended)
