"""The strategy and its advice: what to do on this move, and the options open to a model.

A ``Strategy`` is a BOA agent (Baarslag et al.'s decomposition in GENIUS: Bidding strategy,
Opponent model, Acceptance strategy) with a schedule for the target:

    target  = schedule.target(situation)             what to aim at on this move
    model   = FrequencyModel.learn(their offers)      what the other side seems to want
    offers  = bids(index, target, model)              K offers at the target, best for them first
    accept  = acceptance.decide(situation, offers[0]) AC_next / AC_time / AC_combi

``advise`` returns all of it as an ``Advice``: the candidates with their worth, whether to
accept and why, and which choices a model may make. The rule sellers play the advice as
it stands (recommended choice, always); the assisted LLM seller sees it and chooses.

Business settings: ``aspiration`` (the utility to open at), the schedule's shape,
``leeway`` (how far below the target a model may accept or, with ``own_terms``, propose
its own terms) and ``walk_away`` (whether a model may walk away; under alternating offers
walking away forfeits the rounds left, which a deadline would give for free).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..domain.issues import Offer
from .acceptance import Acceptance
from .bidding import bids
from .opponent import FrequencyModel
from .outcomes import OutcomeIndex
from .schedule import BOULWARE_E, CONCEDER_E, LINEAR_E, Hardliner, Schedule, TimeDependent, TitForTat
from .situation import Situation

CANDIDATE_IDS = "ABCDEFGH"
ACCEPT, WALK_AWAY = "accept", "walk_away"


@dataclass(frozen=True)
class Candidate:
    id: str
    terms: Offer
    worth: float  # to this side
    their_worth: float | None = None  # to the other side, as the opponent model estimates it


@dataclass(frozen=True)
class Advice:
    target: float
    floor: float
    progress: float
    final_move: bool
    candidates: tuple[Candidate, ...]
    standing_worth: float | None = None  # the other side's standing offer, to this side
    accept: str | None = None  # the acceptance condition that says accept, or None
    can_accept: bool = False  # accepting is open to a model (recommended, or within the leeway)
    can_walk_away: bool = False
    own_terms: bool = False  # a model may propose terms of its own, worth at least ``target - leeway``
    leeway: float = 0.0

    @property
    def recommended(self) -> str:
        """``accept`` or the id of the candidate to offer."""
        return ACCEPT if self.accept else self.candidates[0].id

    @property
    def choices(self) -> tuple[str, ...]:
        """The candidate ids a model may offer. None when accepting is recommended: every
        counter-offer would then be worth less than the offer on the table."""
        return () if self.accept else tuple(c.id for c in self.candidates)

    @property
    def actions(self) -> tuple[str, ...]:
        """The protocol actions open to a model: a subset of make_offer, accept, walk_away."""
        out = ("make_offer",) if self.choices or self.own_terms and not self.accept else ()
        if self.can_accept:
            out += (ACCEPT,)
        if self.can_walk_away:
            out += (WALK_AWAY,)
        return out

    def candidate(self, cid: str) -> Candidate:
        for c in self.candidates:
            if c.id == cid:
                return c
        raise KeyError(cid)

    def choice_of(self, terms: Offer) -> str | None:
        """The id of the candidate with exactly these terms, if any."""
        return next((c.id for c in self.candidates if c.terms == terms), None)

    @property
    def lowest_own_terms(self) -> float:
        """The least a model's own terms may be worth to this side."""
        return max(self.floor, self.target - self.leeway)


@dataclass(frozen=True)
class Strategy:
    schedule: Schedule = field(default_factory=TimeDependent)
    opponent_model: bool = True  # rank bids by a frequency model; False: nearest their latest offer
    acceptance: Acceptance = field(default_factory=Acceptance)
    candidates: int = 1  # measured: the 270M's picks among 3 were noise and cost score (docs/strategy.md)
    window: float = 0.05  # bids come from outcomes up to this much above the target
    similarity: float = 0.5  # weight of nearness to their latest offer against the opponent model's estimate
    leeway: float = 0.0
    own_terms: bool = False
    walk_away: bool = False

    def __post_init__(self):
        if not 1 <= self.candidates <= len(CANDIDATE_IDS):
            raise ValueError(f"candidates must be 1..{len(CANDIDATE_IDS)}, not {self.candidates}")
        for name in ("window", "leeway"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"{name} must be a finite number in [0, 1], not {v!r}")

    @property
    def name(self) -> str:
        return self.schedule.name

    @property
    def opens_moves(self) -> bool:
        """Whether a model playing this strategy chooses any move (more than one candidate,
        accepting within a leeway, walking away, its own terms); with none open, the
        strategy sets every move and the model writes only the words."""
        return self.candidates > 1 or self.leeway > 0 or self.own_terms or self.walk_away

    def index(self, situation: Situation) -> OutcomeIndex:
        return OutcomeIndex.shared(situation.space, situation.preferences, situation.limits)

    def target(self, situation: Situation, jitter: float = 0.0) -> float:
        """The schedule's target on this move, kept between the floor and the best outcome."""
        return self._target(situation, self.index(situation), jitter)

    def _target(self, situation: Situation, idx: OutcomeIndex, jitter: float) -> float:
        t = self.schedule.target(situation, idx.u_max) + jitter
        return max(situation.floor, min(idx.u_max, t))

    def opponent(self, situation: Situation) -> FrequencyModel | None:
        if not self.opponent_model:
            return None
        return FrequencyModel.learn(situation.space, situation.preferences, situation.their_offers)

    def advise(self, situation: Situation, *, jitter: float = 0.0) -> Advice:
        """What to do on this move (``jitter``: a rule party's noise on the target)."""
        idx = self.index(situation)
        target = self._target(situation, idx, jitter)
        model = self.opponent(situation)
        offers = bids(
            idx,
            target,
            model=model,
            toward=situation.standing,
            k=self.candidates,
            window=self.window,
            similarity=self.similarity,
        )
        candidates = tuple(
            Candidate(cid, o, situation.utility(o), model.utility(o) if model else None)
            for cid, o in zip(CANDIDATE_IDS, offers)
        )
        accept = self.acceptance.decide(situation, candidates[0].worth)
        standing = situation.standing
        worth = situation.utility(standing) if standing is not None else None
        can_accept = accept is not None or (
            standing is not None
            and situation.limits.allows(standing, situation.preferences)
            and worth is not None
            and worth >= max(situation.floor, candidates[0].worth - self.leeway) - 1e-9
        )
        return Advice(
            target=target,
            floor=situation.floor,
            progress=situation.progress,
            final_move=situation.final_move,
            candidates=candidates,
            standing_worth=worth,
            accept=accept,
            can_accept=can_accept,
            can_walk_away=self.walk_away,
            own_terms=self.own_terms,
            leeway=self.leeway,
        )

    def repair(self, situation: Situation, terms: Offer | None) -> Offer:
        """Terms at the current target nearest ``terms``: where a guard moves an offer that
        crossed a limit, so a repair says nothing about where the floor is."""
        idx = self.index(situation)
        return idx.offer(self._target(situation, idx, 0.0), toward=terms, window=self.window)

    @classmethod
    def named(cls, name: str, params: dict | None = None) -> Strategy:
        """A strategy by name (``boulware``, ``linear``, ``conceder``, ``tit_for_tat``,
        ``hardliner``) with settings as strings or numbers (spec parameters):
        ``e``, ``aspiration``, ``level``, ``leeway``, ``candidates``, ``window``,
        ``opponent`` (on/off), ``own_terms``, ``walk_away``, ``combi`` (AC_combi's T)."""
        p = dict(params or {})
        try:
            aspiration = _opt_float(p.pop("aspiration", None))
            if name in ("boulware", "linear", "conceder"):
                e = float(p.pop("e", {"boulware": BOULWARE_E, "linear": LINEAR_E, "conceder": CONCEDER_E}[name]))
                schedule: Schedule = TimeDependent(e, aspiration)
            elif name == "tit_for_tat":
                schedule = TitForTat(aspiration=aspiration)
            elif name == "hardliner":
                schedule = Hardliner(float(p.pop("level", 0.9)))
            else:
                raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)} (or none)")
            combi = _opt_float(p.pop("combi", None))
            s = cls(
                schedule=schedule,
                opponent_model=_flag(p.pop("opponent", True)),
                acceptance=Acceptance(at_deadline=name != "hardliner", combi_after=combi),
                candidates=int(p.pop("candidates", cls.candidates)),
                window=float(p.pop("window", cls.window)),
                similarity=float(p.pop("similarity", cls.similarity)),
                leeway=float(p.pop("leeway", cls.leeway)),
                own_terms=_flag(p.pop("own_terms", False)),
                walk_away=_flag(p.pop("walk_away", False)),
            )
        except (TypeError, ValueError) as e:
            raise ValueError(f"strategy {name}: {e}") from None
        if p:
            raise ValueError(f"strategy {name}: unknown settings {', '.join(sorted(p))}")
        return s

    def with_(self, **changes) -> Strategy:
        return replace(self, **changes)


STRATEGY_NAMES = ("boulware", "linear", "conceder", "tit_for_tat", "hardliner")


def _opt_float(v) -> float | None:
    if v is None or v == "":
        return None
    x = float(v)
    if not math.isfinite(x):
        raise ValueError(f"{v!r} is not a finite number")
    return x


def _flag(v) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "on", "yes"):
        return True
    if s in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{v!r} is not on/off")
