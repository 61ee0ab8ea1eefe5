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
from .hints import NO_HINTS, Hints
from .opponent import ChoiceModel, FrequencyModel, OpponentModel
from .outcomes import OutcomeIndex
from .reading import READERS, READINGS, read_as, read_hints
from .responsive import Levels, Responsive, conceded_for_us
from .schedule import BOULWARE_E, CONCEDER_E, LINEAR_E, Hardliner, MiCRO, Schedule, TimeDependent, TitForTat
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
class Move:
    """One move open on this turn, priced: what it offers and what that is worth.

    ``kind`` is one of ``MOVE_KINDS``: ``hold`` (the last offer's worth again), ``step`` (the
    schedule's), ``big_step``, ``final`` (the final offer), ``accept`` (the standing offer),
    ``walk_away`` (worth the reservation: no deal)."""

    kind: str
    terms: Offer | None  # the offer (accept: the standing offer; walk_away: None)
    worth: float  # to this side
    their_worth: float | None = None  # to the other side, as the opponent model estimates it
    target: float | None = None  # the target utility the offer was built at


@dataclass(frozen=True)
class Menu:
    """The moves open on this turn, priced, and the one the strategy recommends."""

    moves: tuple[Move, ...]
    recommended: str  # a move kind: what the strategy does (accept included)
    offer: str = "step"  # the offering move it makes when it does not accept
    hints: Hints = NO_HINTS
    conceded: float = 0.0  # how far the other side has come toward us (0..1)

    def move(self, kind: str) -> Move:
        for m in self.moves:
            if m.kind == kind:
                return m
        raise KeyError(kind)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(m.kind for m in self.moves)


@dataclass(frozen=True)
class ReadMove:
    """What the strategy does if the other side's words hold ``id`` (one of ``READINGS``):
    accept the standing offer, or offer ``terms``."""

    id: str
    accept: bool
    terms: Offer  # the offer, or the standing offer it accepts
    worth: float  # to this side


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
    menu: str = (
        "offers"  # "offers": candidates of equal worth (ids A, B...); "moves": the priced moves (ids hold, step...)
    )
    words: str = "model"  # who writes the message: the model, or "strategy" (the move's own sentence)
    recommend: str | None = None  # the candidate the strategy would offer (default: the first)
    conceded: float = 0.0  # how far the other side has come toward us (0..1), for a model's view
    hints: Hints = NO_HINTS  # what the reader read in the other side's words, for a model's view
    readings: tuple[ReadMove, ...] = ()  # menu "readings": the strategy's move under each reading open

    @property
    def recommended(self) -> str:
        """``accept`` or the id of the candidate to offer."""
        return ACCEPT if self.accept else self.offer.id

    @property
    def offer(self) -> Candidate:
        """The candidate the strategy would offer if it does not accept."""
        return self.candidate(self.recommend) if self.recommend else self.candidates[0]

    @property
    def choices(self) -> tuple[str, ...]:
        """The candidate ids a model may offer. With equal-worth offers, none when accepting is
        recommended: every counter-offer would then be worth less than the offer on the table.
        With priced moves a counter-offer stays open: turning a good offer down is a decision."""
        return () if self.accept and self.menu == "offers" else tuple(c.id for c in self.candidates)

    @property
    def actions(self) -> tuple[str, ...]:
        """The protocol actions open to a model: a subset of make_offer, accept, walk_away."""
        out: tuple[str, ...] = ("make_offer",) if self.choices or self.own_terms and not self.accept else ()
        if self.can_accept:
            out += (ACCEPT,)
        if self.can_walk_away:
            out += (WALK_AWAY,)
        return out

    def reading(self, rid: str) -> ReadMove:
        for r in self.readings:
            if r.id == rid:
                return r
        raise KeyError(rid)

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
    opponent_model: bool = True  # rank bids by an opponent model; False: nearest their latest offer
    acceptance: Acceptance = field(default_factory=Acceptance)
    candidates: int = 1  # measured: the 270M's picks among 3 were noise and cost score (docs/strategy.md)
    window: float = 0.05  # bids come from outcomes up to this much above the target
    similarity: float = 0.5  # weight of nearness to their latest offer against the opponent model's estimate
    leeway: float = 0.0
    own_terms: bool = False
    walk_away: bool = False
    learner: str = "frequency"  # the opponent model: "frequency" (HardHeaded) or "choice" (ChoiceModel)
    reader: str | None = None  # who reads the other side's words into hints: None, or "keywords"
    # What a model chooses among: "offers" (equal worth), "moves" (priced moves, issue 29) or
    # "readings" (what the other side's words hold; the strategy moves on that reading).
    menu: str = "offers"
    words: str = (
        "model"  # who writes the message: the model, or "strategy" (a fixed sentence for the move: decide only)
    )

    def __post_init__(self):
        if not 1 <= self.candidates <= len(CANDIDATE_IDS):
            raise ValueError(f"candidates must be 1..{len(CANDIDATE_IDS)}, not {self.candidates}")
        for name in ("window", "leeway"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"{name} must be a finite number in [0, 1], not {v!r}")
        if self.learner not in LEARNERS:
            raise ValueError(f"unknown opponent model {self.learner!r}; choose one of {', '.join(LEARNERS)}")
        if self.words not in WORDS:
            raise ValueError(f"unknown words {self.words!r}; choose one of {', '.join(WORDS)}")
        if self.menu not in MENUS:
            raise ValueError(f"unknown menu {self.menu!r}; choose one of {', '.join(MENUS)}")
        if self.menu == "readings" and self.words != "strategy":
            raise ValueError("menu readings has the model read only: the words are the strategy's (words=strategy)")
        if self.reader is not None and self.reader not in READERS:
            raise ValueError(f"unknown reader {self.reader!r}; choose one of {', '.join(READERS)} (or none)")

    @property
    def name(self) -> str:
        return self.schedule.name

    @property
    def responsive(self) -> bool:
        """Whether the target answers the other side (and hints), not the clock alone."""
        return isinstance(self.schedule, Responsive)

    @property
    def opens_moves(self) -> bool:
        """Whether a model playing this strategy chooses any move (more than one candidate,
        accepting within a leeway, walking away, its own terms); with none open, the
        strategy sets every move and the model writes only the words."""
        return self.candidates > 1 or self.leeway > 0 or self.own_terms or self.walk_away or self.menu != "offers"

    def index(self, situation: Situation) -> OutcomeIndex:
        return OutcomeIndex.shared(situation.space, situation.preferences, situation.limits)

    def target(self, situation: Situation, jitter: float = 0.0, *, hints: Hints | None = None) -> float:
        """The schedule's target on this move, kept between the floor and the best outcome."""
        idx = self.index(situation)
        if self.responsive:
            hints = self.hints(situation) if hints is None else hints
            return self._clip(
                situation, idx, self.levels(situation, idx, self.opponent(situation, hints), hints).target
            )
        return self._target(situation, idx, jitter)

    def _target(self, situation: Situation, idx: OutcomeIndex, jitter: float) -> float:
        t = self.schedule.target(situation, idx.u_max) + jitter
        return max(situation.floor, min(idx.u_max, t))

    @staticmethod
    def _clip(situation: Situation, idx: OutcomeIndex, t: float) -> float:
        return max(situation.floor, min(idx.u_max, t))

    def hints(self, situation: Situation) -> Hints:
        """What this strategy's reader reads in the other side's words (nothing without one)."""
        if self.reader is None or not situation.their_messages:
            return NO_HINTS
        return read_hints(situation.their_messages, situation.space, turn=situation.turn, max_turns=situation.max_turns)

    def opponent(self, situation: Situation, hints: Hints = NO_HINTS) -> OpponentModel | None:
        if not self.opponent_model:
            return None
        if self.learner == "choice":
            return ChoiceModel.learn(
                situation.space,
                situation.preferences,
                situation.exchanges(),
                stated=hints.priorities,
                stated_credible=hints.priorities_credible if hints.priorities else 0.0,
            )
        return FrequencyModel.learn(situation.space, situation.preferences, situation.their_offers)

    def levels(self, situation: Situation, idx: OutcomeIndex, model: OpponentModel | None, hints: Hints) -> Levels:
        """A responsive schedule's targets on this move (hold, step, bigger step, final offer)."""
        assert isinstance(self.schedule, Responsive)
        conceded = conceded_for_us(situation)
        if isinstance(model, ChoiceModel):
            conceded = max(conceded, model.conceded())
        quoted = self.quoted(situation, idx, hints)
        return self.schedule.levels(
            situation,
            idx.u_max,
            conceded=conceded,
            quoted=quoted,
            quote_final=self.quote_frontier(situation, idx, hints, model) if quoted is not None else None,
            hints=hints,
        )

    def quote_frontier(
        self, situation: Situation, idx: OutcomeIndex, hints: Hints, model: OpponentModel | None
    ) -> float | None:
        """The most we can get from an offer the opponent model says the other side values as
        much as its quote: where a final offer that meets the quote lies (logrolling included)."""
        terms = self._quote_terms(situation, idx, hints)
        if terms is None or model is None:
            return None
        bar = model.utility(terms) - 1e-9
        for pos in reversed(range(len(idx))):
            if model.utility(idx.offer_at(pos)) >= bar:
                return idx.utility_at(pos)
        return None

    def quoted(self, situation: Situation, idx: OutcomeIndex, hints: Hints) -> float | None:
        """What the terms the other side quotes are worth to us, the rest at our best (None: no quote)."""
        terms = self._quote_terms(situation, idx, hints)
        return None if terms is None else situation.utility(terms)

    @staticmethod
    def _quote_terms(situation: Situation, idx: OutcomeIndex, hints: Hints) -> Offer | None:
        """The quoted terms, the issues it does not name at our best."""
        if not hints.quote:
            return None
        terms = dict(idx.ideal)
        for name, value in hints.quote.items():
            if name not in terms:
                continue
            issue = situation.space.issue(name)
            if issue.kind == "numeric":
                terms[name] = min(issue.high, max(issue.low, float(value)))
            elif value in issue.options:
                terms[name] = value
        return terms

    def _offer(
        self, situation: Situation, idx: OutcomeIndex, target: float, model: OpponentModel | None, k: int
    ) -> list[Offer]:
        return bids(
            idx,
            target,
            model=model,
            toward=situation.standing,
            k=k,
            window=self.window,
            similarity=self.similarity,
        )

    def moves(self, situation: Situation, *, hints: Hints | None = None) -> Menu:
        """Every move open on this turn, priced (the options a model chooses among).

        Offering moves come at their target's terms, best for the other side first; accept
        is open when the standing offer is within the limits; walking away is worth the
        reservation. With a time-dependent schedule the offering moves are ``hold`` and
        ``step`` (the schedule's target); a responsive one adds a bigger step and a final offer.
        """
        hints = self.hints(situation) if hints is None else hints
        idx = self.index(situation)
        model = self.opponent(situation, hints)
        if self.responsive:
            lv = self.levels(situation, idx, model, hints)
            targets = {k: lv.of(k) for k in ("hold", "step", "big_step", "final")}
            recommended, conceded = lv.recommended, lv.conceded
        else:
            step = self._target(situation, idx, 0.0)
            own = situation.own_offers
            hold = situation.utility(own[-1]) if own else idx.u_max
            targets = {"hold": max(step, min(idx.u_max, hold)), "step": step}
            recommended, conceded = "step", conceded_for_us(situation)
        out: list[Move] = []
        for kind, target in targets.items():
            t = self._clip(situation, idx, target)
            terms = self._offer(situation, idx, t, model, 1)[0]
            their = model.utility(terms) if model is not None else None
            out.append(Move(kind, terms, situation.utility(terms), their, t))
        standing = situation.standing
        best_offer = next(m for m in out if m.kind == recommended)
        if standing is not None and situation.limits.allows(standing, situation.preferences):
            their = model.utility(standing) if model is not None else None
            out.append(Move(ACCEPT, dict(standing), situation.utility(standing), their))
            if self.acceptance.decide(situation, best_offer.worth):
                recommended = ACCEPT
        out.append(Move(WALK_AWAY, None, situation.preferences.reservation))
        return Menu(tuple(out), recommended, best_offer.kind, hints, conceded)

    def advise(self, situation: Situation, *, jitter: float = 0.0, hints: Hints | None = None) -> Advice:
        """What to do on this move (``jitter``: a rule party's noise on the target; ``hints``: a
        reading of the other side's words, else this strategy's own reader's)."""
        if self.menu == "moves":
            return self._advise_moves(situation, hints)
        if self.menu == "readings":
            return self._advise_readings(situation, hints)
        idx = self.index(situation)
        if self.responsive:
            hints = self.hints(situation) if hints is None else hints
            model = self.opponent(situation, hints)
            target = self._clip(situation, idx, self.levels(situation, idx, model, hints).target + jitter)
        else:
            target = self._target(situation, idx, jitter)
            model = self.opponent(situation)
        offers = self._offer(situation, idx, target, model, self.candidates)
        candidates = tuple(
            Candidate(cid, o, situation.utility(o), model.utility(o) if model else None)
            for cid, o in zip(CANDIDATE_IDS, offers, strict=False)
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
            words=self.words,
        )

    def _advise_moves(self, situation: Situation, hints: Hints | None) -> Advice:
        """The advice with the priced moves as the choices (``menu="moves"``): a model chooses
        how far to concede (hold, step, big_step, final), to accept or to walk away; the
        strategy's own move is the recommendation, so following it plays the rule exactly."""
        menu = self.moves(situation, hints=hints)
        candidates: list[Candidate] = []
        recommend = menu.offer
        for m in menu.moves:  # moves with the same terms are one choice, under the first kind's name
            if m.terms is None or m.kind == ACCEPT:
                continue
            same = next((c for c in candidates if c.terms == m.terms), None)
            if same is None:
                candidates.append(Candidate(m.kind, m.terms, m.worth, m.their_worth))
            elif m.kind == recommend:
                recommend = same.id
        offer = menu.move(menu.offer)
        standing = situation.standing
        return Advice(
            target=offer.target if offer.target is not None else offer.worth,
            floor=situation.floor,
            progress=situation.progress,
            final_move=situation.final_move,
            candidates=tuple(candidates),
            standing_worth=situation.utility(standing) if standing is not None else None,
            accept=self.acceptance.decide(situation, offer.worth) if menu.recommended == ACCEPT else None,
            can_accept=ACCEPT in menu.kinds,
            can_walk_away=self.walk_away,
            menu="moves",
            words=self.words,
            recommend=recommend,
            conceded=menu.conceded,
            hints=menu.hints,
        )

    def _advise_readings(self, situation: Situation, hints: Hints | None) -> Advice:
        """The advice with readings as the choices (``menu="readings"``): a model says what the
        other side's words hold beyond the keyword reading, and the strategy makes its own move
        on that reading. The advice is otherwise the priced moves' on the keyword reading, so
        the guard and a fallback play the strategy as it stands."""
        base = self.hints(situation) if hints is None else hints
        advice = self._advise_moves(situation, base)
        reads = []
        for rid in READINGS:
            read = read_as(rid, base, situation)
            if read is None:
                continue
            a = advice if read == base else self._advise_moves(situation, read)
            accept = a.recommended == ACCEPT
            terms = situation.standing if accept and situation.standing is not None else a.offer.terms
            reads.append(ReadMove(rid, accept, dict(terms), situation.utility(terms)))
        return replace(advice, menu="readings", readings=tuple(reads))

    def repair(self, situation: Situation, terms: Offer | None) -> Offer:
        """Terms at the current target nearest ``terms``: where a guard moves an offer that
        crossed a limit, so a repair says nothing about where the floor is."""
        return self.index(situation).offer(self.target(situation), toward=terms, window=self.window)

    @classmethod
    def named(cls, name: str, params: dict | None = None) -> Strategy:
        """A strategy by name (``STRATEGY_NAMES``) with settings as strings or numbers (spec
        parameters): ``e``, ``aspiration``, ``level`` (hardliner), ``step`` (micro), ``lead``,
        ``rho``, ``big_step``, ``hurry`` (responsive), ``reader`` (keywords/none), ``leeway``,
        ``candidates``, ``window``, ``similarity``, ``opponent`` (on/off, or frequency/choice),
        ``own_terms``, ``walk_away``, ``combi`` (AC_combi's T), ``menu`` (offers/moves/readings; those open
        walking away unless ``walk_away`` says otherwise), ``words`` (model/strategy)."""
        p = dict(params or {})
        try:
            aspiration = _opt_float(p, "aspiration")
            learner = "frequency"
            acceptance = Acceptance(at_deadline=name != "hardliner", combi_after=_opt_float(p, "combi"))
            if name in ("boulware", "linear", "conceder"):
                e = _num(p, "e", {"boulware": BOULWARE_E, "linear": LINEAR_E, "conceder": CONCEDER_E}[name])
                schedule: Schedule = TimeDependent(e, aspiration)
            elif name == "tit_for_tat":
                schedule = TitForTat(aspiration=aspiration)
            elif name == "hardliner":
                schedule = Hardliner(_num(p, "level", 0.9))
            elif name == "holdout":  # its ideal, every move; on its last move, whatever beats walking away
                schedule = Hardliner(1.0, name="holdout")
                acceptance = replace(acceptance, at_last_own_move=True)
            elif name == "micro":
                schedule = MiCRO(_opt_float(p, "step"))
            elif name == "responsive":
                d = Responsive()
                schedule = Responsive(
                    exponent=_num(p, "e", d.exponent),
                    aspiration=aspiration,
                    lead=_num(p, "lead", d.lead),
                    reciprocity=_num(p, "rho", d.reciprocity),
                    big_step=_num(p, "big_step", d.big_step),
                    hurry_deadline=_num(p, "hurry", d.hurry_deadline),
                    slack=_num(p, "slack", d.slack),
                )
                learner = "choice"
            else:
                raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)} (or none)")
            opponent = str(p.pop("opponent", "on")).strip().lower()
            if opponent in LEARNERS:
                learner, opponent = opponent, "on"
            # The responsive strategy reads the other side's words unless told not to (reader=none).
            reader = str(p.pop("reader", "keywords" if name == "responsive" else "none")).strip().lower()
            menu = str(p.pop("menu", "offers")).strip().lower()
            words = str(p.pop("words", "strategy" if menu == "readings" else "model")).strip().lower()
            s = cls(
                schedule=schedule,
                opponent_model=_flag(opponent),
                acceptance=acceptance,
                candidates=_num(p, "candidates", cls.candidates, int),
                window=_num(p, "window", cls.window),
                similarity=_num(p, "similarity", cls.similarity),
                leeway=_num(p, "leeway", cls.leeway),
                own_terms=_flag(p.pop("own_terms", False)),
                walk_away=_flag(p.pop("walk_away", menu != "offers")),
                learner=learner,
                reader=None if reader in ("", "none", "off") else reader,
                menu=menu,
                words=words,
            )
        except (TypeError, ValueError) as e:
            raise ValueError(f"strategy {name}: {e}") from None
        if p:
            raise ValueError(f"strategy {name}: unknown settings {', '.join(sorted(p))}")
        return s

    def with_(self, **changes) -> Strategy:
        return replace(self, **changes)

    def settings(self) -> dict[str, str] | None:
        """The spec settings that rebuild this strategy with :meth:`named` (its menu and words
        always, every other setting where it differs from the name's own), or None when no
        settings do (a schedule or acceptance built in code beyond what a spec can say)."""
        sched, full = self.schedule, {"menu": self.menu, "words": self.words}
        fields = {
            TimeDependent: {"e": "exponent", "aspiration": "aspiration"},
            TitForTat: {"aspiration": "aspiration"},
            Hardliner: {"level": "level"},
            MiCRO: {"step": "step"},
            Responsive: {
                "e": "exponent",
                "aspiration": "aspiration",
                "lead": "lead",
                "rho": "reciprocity",
                "big_step": "big_step",
                "hurry": "hurry_deadline",
                "slack": "slack",
            },  # fmt: skip
        }.get(type(sched), {})
        if self.name == "holdout":  # a hardliner at its ideal: the name says it all
            fields = {}
        rest = {k: getattr(sched, f) for k, f in fields.items()}
        rest.update(
            combi=self.acceptance.combi_after,
            opponent=self.learner if self.opponent_model else "off",
            reader=self.reader or "none",
            candidates=self.candidates,
            window=self.window,
            similarity=self.similarity,
            leeway=self.leeway,
            own_terms=self.own_terms,
            walk_away=self.walk_away,
        )
        for key, value in rest.items():
            if isinstance(value, bool):
                value = "on" if value else "off"
            full[key] = "" if value is None else value if isinstance(value, str) else repr(value)
        try:
            if Strategy.named(self.name, full) != self:
                return None
        except ValueError:
            return None
        for key in rest:  # keep only what the name does not set by itself
            fewer = {k: v for k, v in full.items() if k != key}
            if Strategy.named(self.name, fewer) == self:
                full = fewer
        return full


STRATEGY_NAMES = ("boulware", "linear", "conceder", "tit_for_tat", "hardliner", "responsive", "micro", "holdout")
LEARNERS = ("frequency", "choice")
MENUS = ("offers", "moves", "readings")
WORDS = ("model", "strategy")


def _num(p: dict, key: str, default, cast=float):
    """Setting ``key`` of ``p`` (popped) as a finite number, or a ValueError that names it."""
    if key not in p:
        return default
    raw = p.pop(key)
    try:
        value = cast(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{key}={raw!r} is not a {'whole number' if cast is int else 'number'}") from None
    if not math.isfinite(value):
        raise ValueError(f"{key}={raw!r} is not a finite number")
    return value


def _opt_float(p: dict, key: str) -> float | None:
    """Setting ``key`` of ``p`` (popped) as a finite number, or None when unset or empty."""
    if p.get(key, "") in ("", None):
        p.pop(key, None)
        return None
    return _num(p, key, None)


def _flag(v) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "on", "yes"):
        return True
    if s in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{v!r} is not on/off")
