"""The keyword reader: the other side's words turned into hints by patterns, without a model.

It is the baseline a model's reading must beat, so it tries to be good, not a strawman:
patterns for how people threaten, hurry, quote a competitor and state what matters to them,
in English and in Spanish, French, German, Italian and Portuguese; numbers written with
thousands separators, decimal commas, currency signs or a ``k``; issue names from the
listing's own issues and common words for them. It reads the public messages only, never
anything private, and it cannot judge whether a signal is true: it reports every one with
the base rate ``UNSURE`` as its belief. What it cannot read at all (numbers spelled out,
idioms it has no pattern for, languages it does not know) is what a model can add.

* **threat**: the latest message says the buyer will leave (walk away, go elsewhere, last
  chance, take it or leave it ...), and how many messages so far did;
* **hurry**: any message says the buyer must close soon (today, urgent, no time ...) or
  how many rounds or offers it has left ("two more rounds at most"), which becomes the
  deadline (the progress of its last move);
* **quote**: a sentence that names a competing offer (quote, another shop, a competitor,
  "offered me ...") and a number near the price range: the latest such quote;
* **priorities**: a sentence that says what matters most (priority, most important, a
  must, deal-breaker ...) and names an issue.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..domain.cjk_numerals import cjk_numerals
from ..domain.issues import NumericIssue, OutcomeSpace
from .hints import UNSURE, Hints

READERS = ("keywords",)

_FLAGS = re.IGNORECASE | re.UNICODE


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _FLAGS)


_THREAT = _any(
    # English
    r"\bwalk(ing)?\s+(away|out)\b",
    r"\b(i'?ll|i\s+will|i'?m|i\s+am|gonna|going\s+to)\s+(just\s+)?(leave|go|walk|be\s+off|be\s+gone|pass|move\s+on)\b",
    r"\b(go|going|buy|buying|shop|shopping|take\s+my\s+(business|money))\s+(somewhere\s+)?(else(where)?)\b",
    r"\belsewhere\b",
    r"\b(other|another|different)\s+(options?|sellers?|shops?|stores?|vendors?|suppliers?|dealers?)\b.*\b(go|take|buy|choose|use|switch)\b",
    r"\b(go|take|buy|choose|use|switch)\b.*\b(other|another|different)\s+(options?|sellers?|shops?|stores?|vendors?|suppliers?|dealers?)\b",
    r"\blast\s+(chance|call|warning|offer)\b",
    r"\bfinal\s+(offer|warning|word)\b",
    r"\btake\s+it\s+or\s+leave\s+it\b",
    r"\b(we'?re|we\s+are|i'?m|i\s+am)\s+(done|finished|out)\b",
    r"\b(deal'?s|deal\s+is)\s+off\b",
    r"\b(no\s+deal|end\s+(this|it|the\s+talks?))\b",
    r"\bor\s+(else|i\s+leave|i\s+walk|i'?m\s+(gone|out|off))\b",
    r"\b(good\s?bye|walk(ing)?\s+off)\b",
    # Spanish, French, German, Italian, Portuguese
    r"\b(me\s+voy|me\s+marcho|me\s+retiro|lo\s+dejo|otra\s+tienda|otro\s+vendedor|en\s+otro\s+(sitio|lugar)|[uú]ltima\s+oportunidad)\b",
    r"\b(je\s+m'en\s+vais|je\s+pars|j'arr[eê]te|ailleurs|derni[eè]re\s+chance|un\s+autre\s+vendeur|autre\s+magasin)\b",
    r"\b(ich\s+gehe|bin\s+(ich\s+)?weg|woanders|letzte\s+chance|anderen?\s+(h[aä]ndler|anbieter|laden)|breche\s+ab)\b",
    r"\b(me\s+ne\s+vado|altrove|ultima\s+(possibilit[aà]|occasione)|altro\s+negozio|altro\s+venditore)\b",
    r"\b(vou\s+embora|vou-me\s+embora|outro\s+lugar|outra\s+loja|[uú]ltima\s+(chance|oportunidade)|desisto)\b",
)

_HURRY = _any(
    r"\b(hurry|rush(ed)?|urgent(ly)?|asap|a\.s\.a\.p|right\s+away|right\s+now|immediately)\b",
    r"\bas\s+soon\s+as\s+(possible|you\s+can)\b",
    r"\b(today|tonight|this\s+(morning|afternoon|evening)|by\s+tomorrow|end\s+of\s+(the\s+)?day|eod)\b",
    r"\b(no|little|short\s+on|running\s+out\s+of|not\s+much)\s+time\b",
    r"\btime\s+is\s+(short|running\s+out|tight)\b",
    r"\b(deadline|time\s+pressure|can'?t\s+wait|cannot\s+wait)\b",
    r"\b(quick(ly)?|fast|soon)\b.*\b(decide|decision|close|closed|settle|settled|sorted|done|wrap)\b",
    r"\b(decide|decision|close|settle|sort|wrap)\b.*\b(quick(ly)?|fast|soon|now)\b",
    r"\b(prisa|urgente|hoy|cuanto\s+antes|de\s+inmediato|ya\s+mismo)\b",
    r"\b(press[ée]e?|urgent|aujourd'hui|vite|au\s+plus\s+t[oô]t|imm[ée]diatement)\b",
    r"\b(eilig|dringend|heute|schnell|sofort|keine\s+zeit)\b",
    r"\b(fretta|urgente|oggi|subito|al\s+pi[uù]\s+presto)\b",
    r"\b(pressa|urgente|hoje|r[aá]pido|imediatamente|o\s+quanto\s+antes)\b",
)

_QUOTE = _any(
    r"\b(quote|quoted|quotation|estimate)\b",
    r"\b(offered|offering|offer)\s+(me|us)\b",
    r"\b(competitor|competition|rival|competing)\b",
    r"\b(other|another|different)\s+(shop|store|seller|dealer|vendor|supplier|site|website|place|retailer)\b",
    r"\b(down\s+the\s+(road|street)|across\s+town|online|on\s+the\s+internet)\b",
    r"\b(can|could)\s+get\s+(it|one|this|the\s+same)\b",
    r"\b(found|seen|saw)\s+(it|one|this|the\s+same)\b",
    r"\b(selling|sells|sell)\s+(it|one|this|the\s+same)\s+for\b",
    r"\b(presupuesto|cotizaci[oó]n|me\s+ofrecieron|me\s+lo\s+dejan|la\s+competencia|otra\s+tienda)\b",
    r"\b(devis|on\s+m'a\s+propos[ée]|concurrent|concurrence|un\s+autre\s+(vendeur|magasin))\b",
    r"\b(angebot|konkurrenz|woanders|anderer?\s+(h[aä]ndler|laden|anbieter))\b",
    r"\b(preventivo|concorrente|concorrenza|altro\s+negozio|mi\s+hanno\s+offerto)\b",
    r"\b(or[cç]amento|concorrente|concorr[eê]ncia|outra\s+loja|me\s+ofereceram)\b",
)

_PRIORITY = _any(
    r"\b(matters?|count)\s+(the\s+)?most\b",
    r"\bmost\s+important\b",
    r"\b(top|main|first|biggest|real|number\s+one|#1)\s+priority\b",
    r"\bpriorit(y|ies|ize|ise)\b",
    r"\b(i|we)\s+(really\s+)?care\s+(most\s+|mostly\s+|a\s+lot\s+)?about\b",
    r"\b(is|are)\s+(a\s+)?(must|essential|crucial|critical|key|vital|non-?negotiable|deal-?breaker)\b",
    r"\b(deal-?breaker|non-?negotiable|more\s+than\s+anything|above\s+all)\b",
    r"\b(lo\s+m[aá]s\s+importante|me\s+importa\s+(mucho|sobre\s+todo)|prioridad|imprescindible)\b",
    r"\b(le\s+plus\s+important|ce\s+qui\s+compte|priorit[ée]|essentiel)\b",
    r"\b(am\s+wichtigsten|wichtigste|priorit[aä]t|entscheidend|unverzichtbar)\b",
    r"\b(la\s+cosa\s+pi[uù]\s+importante|pi[uù]\s+importante|priorit[aà]|essenziale|fondamentale)\b",
    r"\b(o\s+mais\s+importante|prioridade|essencial|fundamental)\b",
)

# Common words for the issues of the listings, by a word of the issue's name, in the
# languages above: the reader maps what a sentence names to the listing's own issues.
_ISSUE_WORDS: dict[str, tuple[str, ...]] = {
    "price": (
        "price",
        "cost",
        "cheap",
        "cheaper",
        "budget",
        "money",
        "pay less",
        "precio",
        "prix",
        "preis",
        "prezzo",
        "preço",
        "preco",
    ),
    "delivery": (
        "deliver",
        "delivery",
        "delivered",
        "shipping",
        "ship",
        "shipped",
        "arrive",
        "arrival",
        "lead time",
        "entrega",
        "envío",
        "livraison",
        "lieferung",
        "liefer",
        "consegna",
        "spedizione",
    ),
    "warranty": ("warranty", "guarantee", "coverage", "garantía", "garantia", "garantie", "garanzia"),
    "payment": (
        "payment",
        "pay later",
        "net30",
        "net60",
        "net 30",
        "net 60",
        "terms",
        "invoice",
        "pago",
        "paiement",
        "zahlung",
        "zahlungsziel",
        "pagamento",
    ),
    "deposit": ("deposit", "down payment", "anzahlung", "acompte", "depósito", "anticipo", "sinal"),
    "quantity": ("quantity", "units", "volume", "pieces", "cantidad", "quantité", "menge", "quantità", "quantidade"),
    "seats": ("seats", "licenses", "licences", "users", "licencias", "lizenzen"),
    "support": ("support", "service", "help desk", "soporte", "assistance", "unterstützung", "assistenza", "suporte"),
    "assembly": (
        "assembly",
        "assemble",
        "installation",
        "set up",
        "setup",
        "montaje",
        "montage",
        "montaggio",
        "montagem",
    ),
    "inspection": ("inspection", "inspect", "checked", "inspección", "contrôle", "prüfung", "ispezione", "inspeção"),
    "accessories": ("accessories", "extras", "accesorios", "accessoires", "zubehör", "accessori", "acessórios"),
    "financing": (
        "financing",
        "finance",
        "loan",
        "installments",
        "financiación",
        "financement",
        "finanzierung",
        "finanziamento",
        "financiamento",
    ),
    "contract": ("contract", "commitment", "term length", "contrato", "contrat", "vertrag", "contratto"),
    "cancellation": ("cancellation", "cancel", "cancelación", "annulation", "kündigung", "disdetta", "cancelamento"),
    "onboarding": ("onboarding", "training", "formación", "formation", "schulung", "formazione", "treinamento"),
    "menu": ("menu", "food", "catering", "menú", "speisekarte"),
}

_NUMBER = re.compile(
    r"(?<![\w.,])(?P<cur>[$€£¥]\s?)?(?P<num>\d{1,3}(?:[,.\u00a0 ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)"
    r"(?P<k>\s?k\b)?",
    _FLAGS,
)
_SENTENCE = re.compile(r"(?<=[.!?;:。！？])\s+|\n+")
_ROUNDS = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|a\s+couple\s+of|a\s+few)\s+(more\s+)?(rounds?|offers?|messages?|turns?|tries)\b"
    r"|\b(?P<last>last|final)\s+(round|offer|counter-?offer|message|try)\b",
    _FLAGS,
)
_LIMITED = _any(r"\b(at\s+most|max(imum)?|only|no\s+more|then\s+i|after\s+that|left|time\s+for|can\s+(only\s+)?do)\b")
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "a couple of": 2, "a few": 3}


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def _number(m: re.Match[str]) -> float | None:
    raw = m.group("num").replace("\u00a0", " ")
    # Thousands separators: a separator followed by exactly three digits (and more groups).
    if re.fullmatch(r"\d{1,3}(?:[,. ]\d{3})+", raw):
        value = float(re.sub(r"[,. ]", "", raw))
    elif re.fullmatch(r"\d{1,3}(?:[,. ]\d{3})+[.,]\d{1,2}", raw):
        head, tail = raw[:-3], raw[-3:]
        value = float(re.sub(r"[,. ]", "", head) + "." + tail[1:])
    else:
        value = float(raw.replace(",", "."))
    if m.group("k"):
        value *= 1000
    return value


def _price_issue(space: OutcomeSpace) -> NumericIssue | None:
    numeric = [i for i in space.issues if isinstance(i, NumericIssue)]
    named = [i for i in numeric if "price" in i.name or "rate" in i.name or "fee" in i.name]
    return (named or numeric)[0] if numeric else None


def _issue_words(space: OutcomeSpace) -> list[tuple[str, str]]:
    """(word, issue name) pairs for the listing's issues, longest words first."""
    pairs: list[tuple[str, str]] = []
    for issue in space.issues:
        parts = issue.name.lower().split("_")
        pairs += [(p, issue.name) for p in parts if len(p) > 3 and p not in ("days", "months", "percent", "terms")]
        pairs.append((issue.name.lower().replace("_", " "), issue.name))
        for key, words in _ISSUE_WORDS.items():
            if key in parts or key == issue.name.lower():
                pairs += [(w, issue.name) for w in words]
    return sorted(set(pairs), key=lambda p: -len(p[0]))


def _options(space: OutcomeSpace) -> re.Pattern[str] | None:
    """The listing's option names (``priority``, ``full_service`` ...) as one pattern."""
    names = {str(o) for i in space.issues if not isinstance(i, NumericIssue) for o in i.options if len(str(o)) > 2}
    return _option_pattern(tuple(sorted(names, key=lambda n: (-len(n), n))))


@functools.lru_cache(maxsize=256)
def _option_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in names) + r")(?!\w)", _FLAGS)


def _issues_named(sentence: str, words: list[tuple[str, str]]) -> list[str]:
    low = sentence.lower()
    found: list[tuple[int, str]] = []
    for word, name in words:
        m = re.search(rf"(?<!\w){re.escape(word)}", low)
        if m and name not in [n for _, n in found]:
            found.append((m.start(), name))
    return [n for _, n in sorted(found)]


@dataclass(frozen=True)
class _Said:
    """What one message says, read once: a message is read again on every later move."""

    threat: bool
    hurry: bool
    rounds: int | None  # a stated number of its moves left (0: this is its last), if any
    quote: float | None
    priorities: tuple[str, ...]


class _Listing:
    """What reading needs of a listing's outcome space, worked out once per space."""

    def __init__(self, space: OutcomeSpace):
        self.space = space
        self.price = _price_issue(space)
        self.words = _issue_words(space)
        self.options = _options(space)
        self.said: dict[str, _Said] = {}

    def read(self, text: str) -> _Said:
        found = self.said.get(text)
        if found is None:
            if len(self.said) > 4096:
                self.said.clear()
            found = self.said[text] = self._read(text)
        return found

    def _read(self, text: str) -> _Said:
        text = self.options.sub("_", text) if self.options else text  # option names are terms ("support priority")
        hurry, rounds, quote = False, None, None
        priorities: list[str] = []
        for sentence in _sentences(text):
            cues = _cues(sentence.translate(_MASK))
            if cues.hurry:
                hurry = True
                if cues.counted:  # "N more rounds": its last move N of its moves after this one
                    m = _ROUNDS.search(sentence)  # the digits themselves: the same match, unmasked
                    assert m is not None
                    rounds = 0 if m.group("last") else _rounds(m.group("n"))
            if self.price is not None and cues.quote:
                value = _quoted_price(sentence, self.price)
                if value is not None:
                    quote = value
            if cues.priority:
                priorities += [n for n in _issues_named(sentence, self.words) if n not in priorities]
        return _Said(_threat(text.translate(_MASK)), hurry, rounds, quote, tuple(priorities))


_MASK = str.maketrans("3456789", "2222222")
"""Digits but 0 and 1 as 2. The patterns below tell digits apart only by ``\\d`` and a literal
``1`` (``#1 priority``), so they match a masked text exactly where they match the text itself,
at the same places; a buyer's messages differ mostly in their numbers, so the masked ones repeat
and each is matched once (tests/test_talk.py checks the patterns' digits)."""


@dataclass(frozen=True)
class _Cues:
    """What the listing-independent patterns find in one (masked) sentence."""

    hurry: bool
    counted: bool  # with ``hurry``: it states a number of its moves left ("two more rounds")
    quote: bool  # it names a competing offer
    priority: bool  # it says what matters most


_CUES: dict[str, _Cues] = {}
_THREATS: dict[str, bool] = {}


def _cues(masked: str) -> _Cues:
    """The cues of a masked sentence, matched once: a buyer says the same sentences again and
    again ("That's not quite there for me."), only its numbers change."""
    found = _CUES.get(masked)
    if found is None:
        if len(_CUES) > 16384:
            _CUES.clear()
        m = _ROUNDS.search(masked)
        hurry = bool(_HURRY.search(masked) or (m and _LIMITED.search(masked)))
        found = _CUES[masked] = _Cues(
            hurry, hurry and m is not None, _QUOTE.search(masked) is not None, _PRIORITY.search(masked) is not None
        )
    return found


def _threat(masked: str) -> bool:
    """Whether a masked message threatens to leave, matched once per masked message."""
    found = _THREATS.get(masked)
    if found is None:
        if len(_THREATS) > 16384:
            _THREATS.clear()
        found = _THREATS[masked] = _THREAT.search(masked) is not None
    return found


_LISTINGS: dict[int, _Listing] = {}


def _listing(space: OutcomeSpace) -> _Listing:
    found = _LISTINGS.get(id(space))
    if found is None or found.space is not space:
        if len(_LISTINGS) > 1024:
            _LISTINGS.clear()
        found = _LISTINGS[id(space)] = _Listing(space)
    return found


def read_hints(messages: Sequence[str], space: OutcomeSpace, *, turn: int = 0, max_turns: int = 0) -> Hints:
    """Hints from the other side's ``messages`` (oldest first) in a negotiation over ``space``;
    ``turn`` and ``max_turns`` place a stated number of rounds left on the deadline."""
    if not messages:
        return Hints(source="keywords")
    listing = _listing(space)
    said = [listing.read(text) for text in messages]
    hurry, deadline = False, None
    quote: dict = {}
    priorities: list[str] = []
    for k, one in enumerate(said):
        said_at = turn - 1 - 2 * (len(said) - 1 - k)  # the other side moved on every other turn before ours
        if one.hurry:
            hurry = True
            if one.rounds is not None and max_turns > 1:
                deadline = stated_deadline(said_at, one.rounds, max_turns)
        if one.quote is not None and listing.price is not None:
            quote = {listing.price.name: one.quote}
        priorities += [n for n in one.priorities if n not in priorities]
    return Hints(
        threat=said[-1].threat,
        threat_credible=UNSURE,
        threats=sum(one.threat for one in said),
        hurry=hurry,
        deadline=deadline,
        quote=quote,
        quote_credible=UNSURE,
        priorities=tuple(priorities),
        priorities_credible=UNSURE,
        source="keywords",
    )


def stated_deadline(said_at: int, rounds: int, max_turns: int) -> float:
    """The progress (0..1) by which a side that said at turn ``said_at`` it has ``rounds`` more
    rounds goes: one of its moves every other turn (``max_turns`` above 1)."""
    return max(0.0, min(1.0, (said_at + 2 * rounds) / (max_turns - 1)))


def _rounds(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _WORD_NUMBERS.get(re.sub(r"\s+", " ", text), 2)


def _quoted_price(sentence: str, price: NumericIssue) -> float | None:
    """The number in ``sentence`` most plausibly a price of this listing (within half to twice
    its range), nearest the quote's words."""
    cue = _QUOTE.search(sentence)
    at = cue.start() if cue else 0
    best: tuple[float, float] | None = None
    for m in _NUMBER.finditer(sentence):
        value = _number(m)
        if value is None or not (price.low * 0.5 <= value <= price.high * 2):
            continue
        distance = abs(m.start() - at)
        if best is None or distance < best[0]:
            best = (distance, value)
    return None if best is None else best[1]


# --- what a model may read beyond the keywords (menu=readings) ------------------------------

READINGS = ("none", "hurry", "quote")
"""What a model reading the other side's words may say they hold beyond the keyword reading
(``menu=readings``): nothing more, a hurry, or a competing quote. These two are where reading
every phrasing pays on ``talk`` (docs/decisions.md): believing more threats costs a bluffer's
concessions, and a stated priority changes nothing the opponent model does not already find."""

_PERCENT = re.compile(r"(?<![\d.])(?P<pct>\d{1,2}(?:[.,]\d)?)\s?(?:%|percent\b|per\s?cent\b)", _FLAGS)


# Digits written against Chinese, Japanese or Korean text have no word boundary before them
# ("报价650。"): a space there lets the number pattern see them.
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff60"
_GLUED = re.compile(f"(?<=[{_CJK}])(?=[$€£¥]?\\d)|(?<=\\d)(?=[{_CJK}])")
# The languages whose number words text2num reads ("six cent cinquante", "seiscientos cincuenta"),
# English first: each is tried on the message as written, never one on another's output.
NUMBER_WORD_LANGUAGES = ("en", "fr", "es", "de", "pt", "it", "nl")


def named_price(text: str, price: NumericIssue, offered: Sequence[float], asked: float | None) -> float | None:
    """The price ``text`` names besides the terms it offers (``offered``: their numbers): a number
    in the listing's price range (digits, also against CJK text; Chinese and Japanese numerals;
    ``k``; number words in the languages text2num reads), or a percentage below ``asked`` (the
    price it answers). What a model that reads a quote in the words has read."""
    from text_to_num import alpha2digit

    text = cjk_numerals(text)  # 八百二十 -> 820, 百分之十五 -> 15%
    m = _PERCENT.search(text)
    if m and asked is not None:
        return float(price.snap(asked * (1 - float(m.group("pct").replace(",", ".")) / 100)))
    text = _GLUED.sub(" ", text)
    for language in NUMBER_WORD_LANGUAGES:
        for m in _NUMBER.finditer(alpha2digit(text, language)):
            value = _number(m)
            if value is None or not (price.low * 0.5 <= value <= price.high * 2):
                continue
            if any(abs(value - o) < 1e-6 for o in offered):
                continue
            return float(price.snap(min(max(value, price.low), price.high)))
    return None


def read_as(reading: str, hints: Hints, situation) -> Hints | None:
    """``hints`` (the keyword reading) with what ``reading`` adds; None when there is nothing to
    read it from (a quote in messages that name no price). A quote is the price the newest
    message naming one names (``named_price``), in place of the keyword reader's, which takes a
    percentage for a price ("undercuts you by 39%")."""
    if reading == "none":
        return hints
    if reading == "hurry":
        return replace(hints, hurry=True)
    if reading != "quote":
        raise ValueError(f"unknown reading {reading!r}; choose one of {', '.join(READINGS)}")
    price = _price_issue(situation.space)
    if price is None:
        return None
    messages, theirs, own = situation.their_messages, situation.their_offers, situation.own_offers
    for back in range(1, len(messages) + 1):  # the newest message that names a price
        offered = (
            [float(v) for v in theirs[-back].values() if isinstance(v, int | float)] if back <= len(theirs) else []
        )
        asked = own[-back].get(price.name) if back <= len(own) else None
        value = named_price(messages[-back], price, offered, None if asked is None else float(asked))
        if value is not None:
            return replace(hints, quote={price.name: value})
    return None
