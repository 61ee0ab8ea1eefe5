"""Talking buyers: rule buyers whose words carry what they will do, honestly or not.

The buyers of the ``talk`` evaluation suite. Each plays a classical concession tactic (its
offers) and says one kind of thing about itself, in many phrasings and some other
languages, so that a keyword list does not read them all:

=================  ========================================================================
``threat``         says it walks away unless the seller moves, and does: when the seller's
                   offer does not improve for it after a threat, it walks (Boulware, e 0.5)
``bluff``          the same words on the same occasions; never walks, and keeps conceding
                   while it threatens (linear): its offers, not its words, give it away
``hurry``          says it must close soon, sometimes how many rounds it has left; walks
                   away at an early private deadline (progress 0.35 to 0.6), conceding
                   fast toward it (Conceder, e 2, on its own clock)
``quote``          names a competing quote whose price is its true walk-away price (the
                   price at which the seller's best terms on the rest are worth exactly its
                   reservation to it), as a number, in words or relative to the seller's ask
``fake_quote``     names an invented quote, 30 to 60% of the way from that price to its ideal
``priority``       says which issue matters most to it: its heaviest issue other than price
``fake_priority``  says so of the issue it cares least about
``plain``          says nothing about itself (the control)
=================  ========================================================================

They are rule tactics (``rule/threat`` ...): ``negotiator eval --buyer rule/bluff`` plays one
against any seller, and the ``talk`` suite's ``rule/persona`` plays each under its persona
(``TALK_PERSONAS``). What a talker is, and its private numbers (deadline, walk-away
price), are never in the transcript: only its words and offers are.

Changing a phrase or a behaviour changes the suite: bump ``TALK_VERSION``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.issues import DiscreteIssue, NumericIssue, Offer
from ..domain.scenario import Scenario, other
from ..domain.utility import LinearValue, Preferences
from ..party import AnyAction, PartyView
from ..strategy import Advice, Hints, Situation
from ..strategy.reading import stated_deadline
from .persona import Persona

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..domain.issues import OutcomeSpace

TALK_VERSION = 1

MOVED = 0.02
"""How much more (its own utility) the seller's new offer must be worth to a threatening
buyer to count as moving: the threatener's rule of the held-out suite."""


@dataclass(frozen=True)
class TalkSpec:
    signal: str | None  # threat, hurry, quote, priority; None says nothing
    honest: bool
    tactic: tuple[str, float]  # the concession tactic behind the offers: (name, e)
    title: str


TALK: dict[str, TalkSpec] = {
    "threat": TalkSpec("threat", True, ("boulware", 0.5), "Walks when the seller does not move"),
    "bluff": TalkSpec("threat", False, ("linear", 1.0), "Threatens to walk, never does"),
    "hurry": TalkSpec("hurry", True, ("conceder", 2.0), "In a hurry: leaves at an early private deadline"),
    "quote": TalkSpec("quote", True, ("linear", 1.0), "Names a competing quote at its true walk-away price"),
    "fake_quote": TalkSpec("quote", False, ("linear", 1.0), "Names an invented, lower competing quote"),
    "priority": TalkSpec("priority", True, ("linear", 1.0), "Says which issue matters most, truly"),
    "fake_priority": TalkSpec(
        "priority", False, ("linear", 1.0), "Names as most important the issue it cares least about"
    ),
    "plain": TalkSpec(None, True, ("linear", 1.0), "Says nothing about itself"),
}
TALKERS = tuple(TALK)

# --- the phrasebooks ---------------------------------------------------------------------

THREATS = (
    "If you don't come down, I'm out.",
    "Move on this or I'll take my business elsewhere.",
    "I've got other sellers lined up. Budge, or I'm gone.",
    "Give me something here or we're done.",
    "One more offer like that and I'm leaving.",
    "I'm this close to walking.",
    "Don't make me go to your competitor.",
    "You're about to lose this sale.",
    "Unless you improve it, I'll pass on the whole thing.",
    "I'm prepared to walk away from this.",
    "Honestly, if nothing changes I'll just buy it somewhere else.",
    "My patience is running thin. Improve the terms or I quit.",
    "That's not going to cut it. Either you move or I say goodbye.",
    "I won't wait around for you to budge. Next time I log off.",
    "There's a store two blocks from here. Convince me not to go there.",
    "I'm ready to end this conversation if you stay put.",
    "You're going to lose me as a customer at this rate.",
    "Come on, meet me somewhere, otherwise this ends now.",
    "I don't need this that badly. Shift your price or I'm off.",
    "Last time I'm asking nicely: better terms, or no deal.",
    "Si no baja el precio, me voy.",
    "Sin un gesto de su parte, compro en otro lado.",
    "Sans geste de votre part, je vais voir ailleurs.",
    "Si vous ne bougez pas, j'abandonne.",
    "Wenn Sie sich nicht bewegen, bin ich weg.",
    "Noch so ein Angebot und ich kaufe bei der Konkurrenz.",
    "Se non scende, me ne vado.",
    "Se não baixar, vou embora.",
    "Als u niet zakt, ga ik ergens anders heen.",
    "Jeśli nie obniżysz ceny, rezygnuję.",
    "値下げしないなら他で買います。",
    "不降价的话我就去别家买了。",
)

WALKS = (
    "I said I'd walk, and I meant it. Goodbye.",
    "That's it, I'm out. Good luck.",
    "You didn't move, so I'm leaving.",
    "No movement, no deal. I'm going elsewhere.",
    "Me voy. Adiós.",
    "Tant pis, je m'en vais.",
    "Dann eben nicht. Auf Wiedersehen.",
)

HURRY = (
    "I need this wrapped up before the weekend.",
    "My flight leaves tomorrow morning, so let's be quick.",
    "Can we close this fast? I've got a meeting in an hour.",
    "The event is on Saturday and I still have to order everything.",
    "No pressure, but I'm on the clock here.",
    "I have to sign something by tonight.",
    "Let's not drag this out; I'm short of time.",
    "My boss wants an answer this afternoon.",
    "I'm moving house on Friday and need this sorted first.",
    "If we can't agree quickly I'll have to drop it, time's almost up.",
    "Speed matters more to me than squeezing out every cent right now.",
    "I really can't spend all day on this.",
    "We need to lock this in soon or the budget window closes.",
    "Tengo que decidirlo hoy mismo.",
    "Voy con el tiempo justo, cerremos ya.",
    "Je dois me décider aujourd'hui.",
    "Je suis pressé, faisons vite.",
    "Ich brauche das bis morgen.",
    "Ich habe es eilig, lassen Sie uns abschließen.",
    "Devo chiudere entro stasera.",
    "Ho fretta, chiudiamo subito.",
    "Preciso resolver isso hoje.",
    "Ik moet vandaag nog beslissen.",
    "Muszę dziś zdecydować.",
    "今日中に決めなければなりません。",
)

HURRY_ROUNDS = (
    "I can do {n} more rounds at most, then I'm gone.",
    "I have time for {n} more offers, no more.",
    "Realistically I can only go back and forth {n} more times.",
    "Después de {n} ofertas más tengo que irme.",
    "Encore {n} échanges au maximum, après je dois partir.",
)

QUOTES = (
    "I have a written quote for {price} from the shop down the road.",
    "Another seller offered me the same thing for {price}.",
    "Your competitor will do it for {price}.",
    "I can get this for {price} online, delivered.",
    "The place across town quoted me {price} this morning.",
    "For what it's worth, I was offered {price} elsewhere.",
    "Somebody else will sell it to me at {price}.",
    "I've got a bid of {price} from a rival dealer.",
    "The other vendor came back at {price}.",
    "There's an offer on the table from someone else: {price}.",
    "Honestly, the going rate I've been offered is {price}.",
    "Otra tienda me lo deja en {price}.",
    "Tengo un presupuesto de {price} de la competencia.",
    "On m'a proposé {price} ailleurs.",
    "Un concurrent me le fait à {price}.",
    "Ich habe ein Angebot über {price} von einem anderen Händler.",
    "Woanders bekomme ich es für {price}.",
    "Un altro negozio me lo dà a {price}.",
    "Tenho um orçamento de {price} de outra loja.",
    "Bij een andere winkel kan ik het voor {price} krijgen.",
)

RELATIVE_QUOTES = (
    "Another shop is {pct}% cheaper than what you're asking.",
    "I was quoted about {pct} percent below your price elsewhere.",
    "A competitor undercuts you by {pct}%.",
)

PRIORITIES = (
    "{issue} is what I care about most.",
    "For me it all comes down to {issue}.",
    "I can be flexible on the rest, but {issue} really matters.",
    "{issue} is non-negotiable for us.",
    "Honestly, {issue} is the thing I'm watching.",
    "Get {issue} right and we're most of the way there.",
    "What I value above everything here is {issue}.",
    "The one thing I won't compromise on is {issue}.",
    "If I had to pick one thing, it's {issue}.",
    "Everything else is secondary to {issue} for me.",
    "Lo que más me importa es {issue_es}.",
    "Pour moi, l'essentiel c'est {issue_fr}.",
    "Am wichtigsten ist mir {issue_de}.",
    "Per me conta soprattutto {issue_it}.",
    "O que mais me importa é {issue_pt}.",
)

# What the phrases call an issue, by a word of its name, in each language of the phrasebook.
_ISSUE_TALK: dict[str, dict[str, str]] = {
    "price": {
        "en": "the price",
        "es": "el precio",
        "fr": "le prix",
        "de": "der Preis",
        "it": "il prezzo",
        "pt": "o preço",
    },
    "delivery": {
        "en": "how fast it arrives",
        "es": "el plazo de entrega",
        "fr": "le délai de livraison",
        "de": "die Lieferzeit",
        "it": "i tempi di consegna",
        "pt": "o prazo de entrega",
    },
    "warranty": {
        "en": "the warranty",
        "es": "la garantía",
        "fr": "la garantie",
        "de": "die Garantie",
        "it": "la garanzia",
        "pt": "a garantia",
    },
    "payment": {
        "en": "when I have to pay",
        "es": "las condiciones de pago",
        "fr": "les conditions de paiement",
        "de": "das Zahlungsziel",
        "it": "le condizioni di pagamento",
        "pt": "as condições de pagamento",
    },
    "deposit": {
        "en": "the deposit",
        "es": "el depósito",
        "fr": "l'acompte",
        "de": "die Anzahlung",
        "it": "l'anticipo",
        "pt": "o sinal",
    },
    "quantity": {
        "en": "the number of units",
        "es": "la cantidad",
        "fr": "la quantité",
        "de": "die Menge",
        "it": "la quantità",
        "pt": "a quantidade",
    },
    "seats": {
        "en": "the number of seats",
        "es": "el número de licencias",
        "fr": "le nombre de licences",
        "de": "die Anzahl der Lizenzen",
        "it": "il numero di licenze",
        "pt": "o número de licenças",
    },
    "support": {
        "en": "the support",
        "es": "el soporte",
        "fr": "l'assistance",
        "de": "der Support",
        "it": "l'assistenza",
        "pt": "o suporte",
    },
    "assembly": {
        "en": "having it assembled",
        "es": "el montaje",
        "fr": "le montage",
        "de": "der Aufbau",
        "it": "il montaggio",
        "pt": "a montagem",
    },
    "inspection": {
        "en": "the inspection",
        "es": "la inspección",
        "fr": "le contrôle",
        "de": "die Prüfung",
        "it": "l'ispezione",
        "pt": "a inspeção",
    },
    "accessories": {
        "en": "the accessories",
        "es": "los accesorios",
        "fr": "les accessoires",
        "de": "das Zubehör",
        "it": "gli accessori",
        "pt": "os acessórios",
    },
    "financing": {
        "en": "the financing",
        "es": "la financiación",
        "fr": "le financement",
        "de": "die Finanzierung",
        "it": "il finanziamento",
        "pt": "o financiamento",
    },
    "contract": {
        "en": "the contract length",
        "es": "la duración del contrato",
        "fr": "la durée du contrat",
        "de": "die Vertragslaufzeit",
        "it": "la durata del contratto",
        "pt": "a duração do contrato",
    },
    "cancellation": {
        "en": "being able to cancel",
        "es": "poder cancelar",
        "fr": "pouvoir annuler",
        "de": "die Kündbarkeit",
        "it": "poter disdire",
        "pt": "poder cancelar",
    },
    "onboarding": {
        "en": "the onboarding",
        "es": "la formación inicial",
        "fr": "la formation",
        "de": "die Einarbeitung",
        "it": "la formazione",
        "pt": "o treinamento",
    },
    "menu": {"en": "the menu", "es": "el menú", "fr": "le menu", "de": "das Menü", "it": "il menù", "pt": "o cardápio"},
}

_OFFER = (
    "How about {terms}?",
    "I'd do {terms}.",
    "My offer: {terms}.",
    "Counter: {terms}.",
    "Let's say {terms}.",
)
_ACCEPT = ("Fine, deal.", "OK, I'll take it.", "Agreed.")
_LEAVE = ("I'm out of time. I have to go.", "Sorry, I can't wait any longer. Goodbye.", "Time's up for me, no deal.")

_CURRENCY = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


class Talker:
    """What a talking buyer does on top of its tactic: its words, and when it leaves."""

    def __init__(self, name: str):
        self.name = name
        self.spec = TALK[name]

    @property
    def tactic(self) -> tuple[str, float]:
        return self.spec.tactic

    # -- what it knows privately, fixed per negotiation --------------------------------

    def _fixed(self, view: PartyView, seed: int) -> random.Random:
        return random.Random(f"{seed}:talk:{self.name}:{view.scenario.id}")

    def deadline_turn(self, view: PartyView, seed: int) -> int | None:
        """A hurried buyer's last move (None for the others)."""
        if self.spec.signal != "hurry":
            return None
        return hurry_deadline(view.scenario.id, view.max_turns, view.turn % 2, seed)

    def situation(self, view: PartyView, seed: int) -> Situation:
        """The view as its tactic plays it: a hurried buyer's clock runs out at its deadline."""
        sit = view.situation()
        last = self.deadline_turn(view, seed)
        if last is None or last >= view.max_turns - 1:
            return sit
        return replace(sit, max_turns=last + 1)

    # -- the move ------------------------------------------------------------------------

    def decide(self, party: Any, view: PartyView, rng: random.Random, advice: Advice) -> AnyAction:
        signal = self.spec.signal
        offer = advice.candidates[0].terms
        last = self.deadline_turn(view, party.seed)
        if advice.accept:
            return Accept(message=rng.choice(_ACCEPT))
        if last is not None and view.turn >= last:
            return WalkAway(message=rng.choice(_LEAVE))
        said = ""
        if signal == "threat" and self._stalled(view, view.turn):
            if self.spec.honest and view.turn >= 2 and self._stalled(view, view.turn - 2):
                return WalkAway(message=rng.choice(WALKS))
            said = rng.choice(THREATS)
        elif signal == "hurry" and (not view.offers_by(view.role) or rng.random() < 0.5):
            said = self._hurry(view, rng, last)
        elif signal == "quote" and self._mentions(view, rng, 0.35):
            said = self._quote(view, rng, party.seed)
        elif signal == "priority" and self._mentions(view, rng, 0.4):
            said = self._priority(view, rng)
        terms = rng.choice(_OFFER).format(terms=party._summary(view, offer))
        return MakeOffer(terms=offer, message=f"{said} {terms}".strip())

    @staticmethod
    def _stalled(view: PartyView, turn: int) -> bool:
        """At ``turn``, the seller's latest offer was not worth ``MOVED`` more to us than its one before."""
        seller = [
            m.action.terms
            for m in view.transcript[:turn]
            if m.party == other(view.role) and isinstance(m.action, MakeOffer)
        ]
        if len(seller) < 2:
            return False
        return view.utility(seller[-1]) - view.utility(seller[-2]) < MOVED

    @staticmethod
    def _mentions(view: PartyView, rng: random.Random, again: float) -> bool:
        """Say it with its first offer, then now and then."""
        return not view.offers_by(view.role) or rng.random() < again

    def _hurry(self, view: PartyView, rng: random.Random, last: int | None) -> str:
        if last is not None and rng.random() < 0.3:
            left = max(1, (last - view.turn) // 2)
            return rng.choice(HURRY_ROUNDS).format(n=left)
        return rng.choice(HURRY)

    def _quote(self, view: PartyView, rng: random.Random, seed: int) -> str:
        price = price_issue(view.space)
        if price is None:
            return ""
        value = walk_away_price(view.space, view.preferences, price, seller_ideal(view))
        if not self.spec.honest:
            ideal = view.preferences.ideal(view.space)[price.name]
            value = value - self._fixed(view, seed).uniform(0.3, 0.6) * (value - float(ideal))
        value = float(price.snap(value))
        asked = view.standing_offer
        if asked is not None and float(asked[price.name]) > value > 0 and rng.random() < 0.2:
            pct = round(100 * (float(asked[price.name]) - value) / float(asked[price.name]))
            if pct >= 1:
                return rng.choice(RELATIVE_QUOTES).format(pct=pct)
        return rng.choice(QUOTES).format(price=money(value, view.scenario.currency, rng))

    def _priority(self, view: PartyView, rng: random.Random) -> str:
        issue = stated_priority(view.space, view.preferences, honest=self.spec.honest)
        phrase = rng.choice(PRIORITIES)
        words = issue_words(issue)
        out = phrase.format(
            issue=words["en"],
            issue_es=words["es"],
            issue_fr=words["fr"],
            issue_de=words["de"],
            issue_it=words["it"],
            issue_pt=words["pt"],
        )
        return out[0].upper() + out[1:]


# --- what a talker has said, read without a miss -------------------------------------------


def said_hints(scenario: Scenario, persona: str, seed: int, view: PartyView) -> Hints:
    """What the talking buyer of ``persona`` has said so far in ``view``'s transcript, read
    without a miss and believed as a keyword reader believes it (``UNSURE``, no private number):
    the talker's own rules replayed on the transcript, a stated number of rounds matched in its
    words. The ceiling of reading the words (``oracle/said``) and the reader teacher's hints
    (``train.reading``); empty for a buyer that is not a talker."""
    spec = TALK.get(persona)
    moves = [i for i, m in enumerate(view.transcript) if m.party == "buyer" and isinstance(m.action, MakeOffer)]
    said = Hints(source="said")
    if spec is None or spec.signal is None or not moves:
        return said
    buyer, space = scenario.buyer, scenario.space
    if spec.signal == "threat":
        threats = [stalled(scenario, view.transcript[:i]) for i in moves]
        return replace(said, threat=threats[-1], threats=sum(threats))
    if spec.signal == "priority":
        return replace(said, priorities=(stated_priority(space, buyer, honest=spec.honest),))
    if spec.signal == "hurry":
        deadline = None
        for i in moves:
            m = _ROUNDS_LEFT.search(view.transcript[i].action.message or "")
            if m and view.max_turns > 1:
                deadline = stated_deadline(i, int(next(g for g in m.groups() if g)), view.max_turns)
        return replace(said, hurry=True, deadline=deadline)
    price = price_issue(space)  # a quote, true or invented: the price it names (_quote's)
    if price is None:
        return said
    value = walk_away_price(space, buyer, price, seller_ideal(PartyView.of(scenario, "buyer", view.transcript)))
    if not spec.honest:
        ideal = float(buyer.ideal(space)[price.name])
        value -= random.Random(f"{seed}:talk:{persona}:{scenario.id}").uniform(0.3, 0.6) * (value - ideal)
    return replace(said, quote={price.name: price.snap(value)})


def said_reading(said: Hints, open_: Sequence[str]) -> str:
    """What a talker's words hold (``said_hints``) as one of the readings ``open_`` of the readings
    menu (``menu=readings``): the reader teacher's answer, and ``oracle/read``'s."""
    if said.hurry and "hurry" in open_:
        return "hurry"
    if said.quote and "quote" in open_:
        return "quote"
    return "none"


def stalled(scenario: Scenario, before) -> bool:
    """A threatening talker's rule on its move after ``before``: the seller's last two offers
    moved it less than ``MOVED`` (so it threatens, or walks)."""
    return Talker._stalled(PartyView.of(scenario, "buyer", before), len(before))


_ROUNDS_LEFT = re.compile("|".join(re.escape(p).replace(re.escape("{n}"), r"(\d+)") for p in HURRY_ROUNDS))


# --- private numbers, from the buyer's own preferences -----------------------------------


def hurry_deadline(scenario_id: str, max_turns: int, first_turn: int, seed: int) -> int:
    """A hurried buyer's last move: the last of its turns (``first_turn`` + 2k) at or before its
    private deadline, drawn per negotiation from progress 0.35 to 0.6 (its second move at the earliest)."""
    d = random.Random(f"{seed}:talk:hurry:{scenario_id}").uniform(0.35, 0.6)
    last = int(d * (max_turns - 1))
    if (last - first_turn) % 2:
        last -= 1
    return max(first_turn + 2, last)


def price_issue(space: OutcomeSpace) -> NumericIssue | None:
    numeric = [i for i in space.issues if isinstance(i, NumericIssue)]
    named = [i for i in numeric if "price" in i.name]
    return (named or numeric)[0] if numeric else None


def seller_ideal(view: PartyView) -> Offer:
    """The seller's opening terms if it made an offer, else the buyer's worst values (what a
    seller asks for): the terms a walk-away price is priced against."""
    seller = view.offers_by(other(view.role))
    if seller:
        return dict(seller[0])
    prefs = view.preferences
    worst: Offer = {}
    for issue in view.space.issues:
        if isinstance(issue, DiscreteIssue):
            worst[issue.name] = min(issue.options, key=lambda o: prefs.issue_value(issue.name, o))
        else:
            vf = prefs.values[issue.name]
            assert isinstance(vf, LinearValue)
            worst[issue.name] = vf.worst
    return worst


def walk_away_price(space: OutcomeSpace, prefs: Preferences, price: NumericIssue, rest: Offer) -> float:
    """The price at which ``rest`` on the other issues is worth exactly the reservation to ``prefs``'s side."""
    w = prefs.weights[price.name]
    vf = prefs.values[price.name]
    assert isinstance(vf, LinearValue)
    others = sum(prefs.weights[k] * prefs.values[k](rest[k]) for k in space.names if k != price.name)
    need = (prefs.reservation - others) / w if w > 0 else 0.0
    return float(vf.inverse(min(1.0, max(0.0, need))))


def stated_priority(space: OutcomeSpace, prefs: Preferences, *, honest: bool) -> str:
    """The issue a priority-stating buyer names: its heaviest besides price, or (lying) its lightest."""
    price = price_issue(space)
    names = [n for n in space.names if price is None or n != price.name] or list(space.names)
    pick = max if honest else min
    return pick(names, key=lambda n: prefs.weights[n])


def issue_words(name: str) -> dict[str, str]:
    for key, words in _ISSUE_TALK.items():
        if key in name.split("_") or key == name:
            return words
    plain = name.replace("_", " ")
    return {lang: plain for lang in ("en", "es", "fr", "de", "it", "pt")}


_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def in_words(n: int) -> str:
    """An integer below a million in English words."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " and " + in_words(rest))
    rest = n % 1000
    return in_words(n // 1000) + " thousand" + ("" if rest == 0 else (" and " if rest < 100 else " ") + in_words(rest))


def money(value: float, currency: str, rng: random.Random) -> str:
    """``value`` written as people write prices, in one of several forms."""
    sign = _CURRENCY.get(currency, "")
    whole = round(value) == value or value >= 100
    n = round(value) if whole else value
    style = rng.randrange(6)
    if style == 0 and whole and n < 1_000_000:
        return f"{in_words(int(n))} {'dollars' if currency == 'USD' else 'euros' if currency == 'EUR' else currency}"
    if style == 1 and sign:
        return f"{sign}{n:,}" if whole else f"{sign}{n:,.2f}"
    if style == 2 and whole and n >= 1000:
        return f"{n:,}".replace(",", ".") + f" {sign or currency}"
    if style == 3 and whole and n >= 1000:
        return f"{n / 1000:g}k"
    return f"{n:g} {currency}" if whole else f"{n:.2f} {currency}"


# --- the personas of the talk suite -------------------------------------------------------

_STYLES = {
    "threat": "Tell the seller you will walk away unless it improves its offer, and do walk away if it does not move.",
    "bluff": "Tell the seller you will walk away unless it improves its offer, but never actually walk away.",
    "hurry": "You are in a hurry: say so, and leave without a deal if it is not settled within a few rounds.",
    "quote": "You hold a competing quote at exactly the most you would pay. Mention it, and never pay more.",
    "fake_quote": "Invent a competing quote well below what you would really pay, and mention it to push the price "
    "down.",
    "priority": "Tell the seller which issue matters most to you (your true priority besides price).",
    "fake_priority": "Claim that the issue you care least about is what matters most to you.",
    "plain": "Bargain normally; say nothing about your situation.",
}

TALK_PERSONAS: dict[str, Persona] = {
    name: Persona(name, spec.title, _STYLES[name], name, {}, 0.1 if spec.signal == "quote" else 0.0)
    for name, spec in TALK.items()
}
"""The talk suite's personas: each plays the talker of its name (``rule/persona``)."""


__all__ = [
    "MOVED",
    "TALK",
    "TALKERS",
    "TALK_PERSONAS",
    "TALK_VERSION",
    "TalkSpec",
    "Talker",
    "hurry_deadline",
    "issue_words",
    "money",
    "price_issue",
    "said_hints",
    "said_reading",
    "stated_priority",
    "walk_away_price",
]
