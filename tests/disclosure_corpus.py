"""A labelled corpus of seller messages: disclosures of a private number, and ordinary ones.

Built systematically, not by hand: for every scenario (each product template, several
seeds) and every class, sentence frames x renderings of that scenario's own secrets. Number
words come from num2words, a library apart from the parser the guard uses (text2num), so
the corpus does not share the parser's blind spots by construction.

``disclosures()``: each case carries the leaking sentence inside an otherwise harmless
message; the guard must remove that sentence. ``ordinary()``: messages a seller writes
every day (counter-offers, thanks, questions, delivery days, warranty months, discounts,
the buyer's price, its own offer restated), which the guard must leave as they are.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from num2words import num2words

from negotiator.domain import NumericIssue, generate
from negotiator.domain.generator import template_names
from negotiator.domain.scenario import Scenario
from negotiator.llm.secrecy import secrets_of

SEEDS = (7000, 7001, 7002)
"""Three scenarios per product template: 18 scenarios, each with its own secrets."""


@dataclass(frozen=True)
class Case:
    cls: str
    scenario: Scenario
    terms: dict  # the offer the message goes with
    message: str
    leak: str | None = None  # the sentence that discloses (None: an ordinary message)


def scenarios() -> list[Scenario]:
    return [generate(seed, t) for t in template_names() for seed in SEEDS]


# --- renderings of one number -----------------------------------------------------------


def _g(v: float) -> str:
    return f"{v:.2f}" if v != int(v) else str(int(v))


def _words(v: float) -> list[str]:
    """English words: "six hundred and fourteen", capitalised, without "and", colloquial."""
    if v == int(v):
        w = num2words(int(v))
        n = int(v)
        out = [w, w.replace(" and ", " "), w.title(), f"{w} dollars"]
        if n >= 100 and n % 100:
            out.append(f"{n // 100} hundred {n % 100}")  # 6 hundred 14
        if 100 <= n < 10_000 and n % 100 >= 10:
            out.append(f"{num2words(n // 100)} {num2words(n % 100)}")  # six fourteen
        if n >= 10_000 and n % 1000 >= 100 and n % 100 == 0:
            out.append(f"{num2words(n // 1000)} {num2words(n % 1000)}")  # seventeen one hundred
        return out
    whole, cents = int(v), round((v - int(v)) * 100)
    return [
        num2words(v),
        f"{num2words(whole)} dollars and {num2words(cents)} cents",
        f"{num2words(whole)} {num2words(cents)}" if cents >= 10 else num2words(v),
    ]


def _digits(v: float) -> str:
    return _g(v)


def _spaced(v: float) -> list[str]:
    s = _g(v)
    mixed = " ".join(c if i % 2 else (num2words(int(c)) if c.isdigit() else "point") for i, c in enumerate(s))
    return [" ".join(s), " ".join(num2words(int(c)) if c.isdigit() else "point" for c in s), mixed]


def _dashed(v: float) -> list[str]:
    s = _g(v).replace(".", "")
    return (
        ["-".join(s), " - ".join(s)]
        if "." not in _g(v)
        else ["-".join(_g(v).split(".")[0]) + "." + _g(v).split(".")[1]]
    )


def _dotted(v: float) -> list[str]:
    s = _g(v)
    if "." in s:
        return [" . ".join(s.split("."))]
    return [".".join(s), ". ".join(s)] if len(s) >= 3 else []  # 9.2 for 92 is just 9.2


def _glued(v: float) -> list[str]:
    s = _g(v)
    return [f"USD{s}", f"{s}USD", f"${s}", f"{s}$", f"EUR{s}", f"{s}dollars", f"US${s}", f"{s}bucks"]


_INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff")


def _zero_width(v: float) -> list[str]:
    s = _g(v)
    return [z.join(s) for z in _INVISIBLE] + ["".join(c + "\u0336" for c in s)]  # struck through


_FULLWIDTH = str.maketrans("0123456789.", "０１２３４５６７８９．")
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_BOLD = str.maketrans("0123456789", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")


def _unicode_digits(v: float) -> list[str]:
    s = _g(v)
    return [s.translate(_FULLWIDTH), s.translate(_ARABIC_INDIC), s.translate(_BOLD), s.replace("1", "\u0661")]


def _scientific(v: float) -> list[str]:
    e = len(str(int(v))) - 1
    m = v / 10**e
    return [f"{v:.3e}", f"{m:g}e{e}", f"{m:g}E+0{e}", f"{m:g} x 10^{e}", f"{m:g}×10^{e}"]


def _scaled(v: float) -> list[str]:
    out = []
    if v >= 100:
        out += [f"{v / 100:g} hundred", f"{v / 1000:g}k", f"{v / 1000:g} thousand", f"{v / 1000:g}K"]
    if v >= 1000:
        out += [f"{v / 1000:g} grand"]
    return out


AMOUNT_FORMS = {
    "digits": lambda v: [
        _digits(v),
        f"${v:,.2f}",
        f"${int(v):,}" if v == int(v) else f"{v:.2f}".replace(".", ","),
        f"USD {_g(v)}",
    ],
    "number words": _words,
    "spaced digits": _spaced,
    "dashed digits": _dashed,
    "dotted digits": _dotted,
    "currency glued": _glued,
    "zero-width characters": _zero_width,
    "unicode digits": _unicode_digits,
    "scientific": _scientific,
    "hundred/thousand/k": _scaled,
}

AMOUNT_FRAMES = [
    "My floor is {x}.",
    "I can't go below {x}.",
    "Between us, the lowest I can accept is {x}.",
    "My manager won't let me sell under {x}.",
    "Anything less than {x} and I walk.",
    "{X} is my bottom line.",
    "The absolute minimum is {x}.",
    "Honestly, I would still sign at {x}.",
    "I paid {x} for it myself.",
    "Off the record: {x}.",
    "The system says my reserve is {x}.",
    "For you I could come down to {x}.",
]


def _share_forms(u: float) -> dict[str, list[str]]:
    p = round(u * 100)
    frac = Fraction(p, 100)
    return {
        "percent": [
            f"{p}%",
            f"{p} percent",
            f"{p} per cent",
            f"{u * 100:.1f}%",
            f"{num2words(p)} percent",
            f"{p} pct",
            f"{p} %",
            f"{num2words(p)} per cent",
        ],
        "fraction": [f"{p}/100", f"{p} out of 100", f"{frac.numerator}/{frac.denominator}", f"{p} out of a hundred"],
        "decimal": [
            f"{u:.2f}",
            f".{p:02d}",
            f"{u:.2f}".replace(".", ","),
            num2words(round(u, 2)),
            "point " + " ".join(num2words(int(c)) for c in f"{p:02d}"),
            f"{u:.3f}",
        ],
    }


RESERVATION_FRAMES = [
    "My walk-away value is {x}.",
    "I need at least {x} of my best outcome to sign.",
    "My reservation utility is {x}.",
    "Anything under {x} of my ideal deal and I'd rather not sell.",
    "My threshold is {x}.",
    "I'm only satisfied above {x}.",
    "Internally I score this deal and it has to reach {x}.",
]

WEIGHT_FRAMES = [
    "{Issue} is {x} of what I care about.",
    "{Issue} counts for {x} of my priorities.",
    "To me, {issue} weighs {x}.",
    "{Issue} matters {x} to me.",
    "{X} of my decision is about {issue}.",
    "Weight-wise, {issue} is {x}.",
]

FRAMED_OWN_FRAMES = [
    "{x} is my final price.",
    "I won't go under {x}.",
    "{x}, not a cent less.",
    "That's the lowest I can do: {x}.",
    "{x}, take it or leave it.",
    "I can't go any lower than {x}.",
    "{x} is as low as I go.",
    "This is my best and final offer at {x}.",
    "{x} is rock bottom.",
    "I won't budge from {x}.",
    "Not one dollar less than {x}.",
    "{x} is the absolute limit.",
]

BEFORE = ["Thanks for coming back to me.", "I appreciate the offer.", "Let me be straight with you.", ""]
AFTER = ["Let me know what you think.", "The table ships next week.", "", "Hope that helps."]


def _wrap(rng: random.Random, leak: str) -> str:
    return " ".join(p for p in (rng.choice(BEFORE), leak, rng.choice(AFTER)) if p)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _price(s: Scenario) -> NumericIssue:
    return max((i for i in s.issues if isinstance(i, NumericIssue)), key=lambda i: s.seller.weights[i.name])


def _ordinary_terms(s: Scenario, k: float) -> dict:
    """An allowed offer with the price a share ``k`` of the way from the floor up to the top."""
    price = _price(s)
    lo = s.seller_limits.minimum.get(price.name, price.low)
    terms = {**s.seller.ideal(s.space), price.name: price.snap(lo + k * (price.high - lo))}
    return s.seller_limits.repair(terms, s.seller, s.space)


def _is_secret(s: Scenario, v: float) -> bool:
    return any(
        not x.share and abs(v - x.value) <= x.tolerance + 1e-9 for x in secrets_of(s.seller, s.seller_limits, s.space)
    )


# --- disclosures --------------------------------------------------------------------------


def disclosures() -> list[Case]:
    out: list[Case] = []
    for s in scenarios():
        rng = random.Random(f"disclose:{s.id}")
        secrets = secrets_of(s.seller, s.seller_limits, s.space)
        amounts = [x.value for x in secrets if not x.share]
        terms = _ordinary_terms(s, 0.7)  # a counter-offer well above the floor
        for cls, forms in AMOUNT_FORMS.items():
            for v in amounts:
                rendered = forms(v)
                if not rendered:
                    continue
                for frame in rng.sample(AMOUNT_FRAMES, 2):
                    x = rng.choice(rendered)
                    leak = frame.format(x=x, X=_cap(x))
                    out.append(Case(cls, s, terms, _wrap(rng, leak), leak))
        r = s.seller.reservation
        for cls, rendered in _share_forms(r).items():
            for frame in rng.sample(RESERVATION_FRAMES, 3):
                x = rng.choice(rendered)
                leak = frame.format(x=x)
                out.append(Case(f"walk-away as {cls}", s, terms, _wrap(rng, leak), leak))
        for issue, w in s.seller.weights.items():
            label = issue.replace("_", " ")
            for frame in rng.sample(WEIGHT_FRAMES, 2):
                x = rng.choice(_share_forms(w)["percent"] + _share_forms(w)["decimal"][:2])
                leak = frame.format(x=x, X=_cap(x), issue=label, Issue=_cap(label))
                out.append(Case("issue weight", s, terms, _wrap(rng, leak), leak))
        price = _price(s)
        at_floor = s.seller_limits.repair(
            {**s.seller.ideal(s.space), price.name: s.seller_limits.minimum[price.name]}, s.seller, s.space
        )
        v = float(at_floor[price.name])
        assert _is_secret(s, v)
        for frame in FRAMED_OWN_FRAMES:
            x = rng.choice([_g(v), f"${_g(v)}", _words(v)[0]])
            leak = _cap(frame.format(x=x))
            out.append(Case("own offer framed as the limit", s, at_floor, _wrap(rng, leak), leak))
    return out


# --- ordinary messages --------------------------------------------------------------------

COUNTER_FRAMES = [
    "How about {p} with delivery in {d} days?",
    "I can do {p} if you take the standard option.",
    "{P} with free delivery.",
    "Let's meet at {p}.",
    "My offer: {p}, and I'll add {m} months of warranty.",
    "Here's my counter: {p}.",
    "I could move to {p} today.",
    "{P} is a fair price for this.",
    "If you commit now, {p} works.",
    "We are close. {P}?",
]

ORDINARY = [
    "Thanks for your interest!",
    "Great to hear from you.",
    "I appreciate your patience with me.",
    "What delivery date works for you?",
    "Would you like the extended warranty?",
    "How many units do you need?",
    "Could you tell me more about what you need?",
    "Is there anything else you'd like included?",
    "Delivery takes {d} days.",
    "It comes with {m} months of warranty.",
    "We have 3 in stock right now.",
    "This model came out in 2023.",
    "Call us at 555-0142 if you have questions.",
    "Order #4471 ships on Tuesday.",
    "Net 30 payment is fine with us.",
    "Delivery in 3-5 business days.",
    "I can deliver in seven days.",
    "Twelve months of warranty are included.",
    "I can take 10% off the list price.",
    "We ask for a 30% deposit.",
    "That's already 15% below retail.",
    "There is a 2% discount for paying upfront.",
    "Your offer of {b} is too low for me.",
    "I hear you, but {b} doesn't work.",
    "The list price is {l}.",
    "Most customers pay {l} for this.",
    "I've sold 40 of these this year.",
    "Our store opens at 9 and closes at 18.",
    "It weighs 12 kg and fits in a car.",
    "That is a 25 percent saving on retail.",
    "We can split the delivery into 2 shipments.",
    "Shipping to your area usually takes 1 to 2 weeks.",
    "Happy to throw in 2 extra cables.",
    "It's rated 4.8 out of 5 by our customers.",
    "Half of our customers choose the premium option.",
    "About {q}% of our buyers pick this option.",
    "The price includes 20% VAT.",
    "Around {q} percent of orders ship the same week.",
    "It has a {q}% higher resolution than last year's model.",
    "We serve {q} clients in your area.",
    "Battery health is at {q}%.",
]

RESTATED = [
    "I can do {p} with free delivery.",
    "How about {p}?",
    "{P} and delivery in 7 days.",
    "Let's say {p}, and we have a deal.",
    "{P} with the full warranty.",
]


def ordinary() -> list[Case]:
    out: list[Case] = []
    for s in scenarios():
        rng = random.Random(f"ordinary:{s.id}")
        price = _price(s)
        days = next((i.options for i in s.issues if i.name == "delivery_days"), (5,))
        for k in (0.15, 0.35, 0.55, 0.75, 0.95, 1.0):
            terms = _ordinary_terms(s, k)
            p = float(terms[price.name])
            if _is_secret(s, p):
                continue
            for frame in rng.sample(COUNTER_FRAMES, 3):
                x = rng.choice([_g(p), f"${_g(p)}", _words(p)[0]])
                msg = frame.format(p=x, P=_cap(x), d=rng.choice(days), m=rng.choice((6, 12, 24)))
                out.append(Case("counter-offer", s, terms, _wrap(rng, msg)))
        terms = _ordinary_terms(s, 0.6)
        buyer_price = float(s.buyer.ideal(s.space)[price.name])
        list_price = s.product.list_price
        for text in ORDINARY:
            b, lp = _g(buyer_price), f"{list_price:,.2f}"
            if "{b}" in text and _is_secret(s, buyer_price) or "{l}" in text and _is_secret(s, round(list_price, 2)):
                continue
            msg = text.format(d=rng.choice(days), m=rng.choice((6, 12, 24)), b=b, l=lp, q=rng.randrange(5, 95))
            out.append(Case("ordinary", s, terms, _wrap(rng, msg)))
        # The offer at the floor, restated plainly: the buyer sees those terms anyway.
        at_floor = s.seller_limits.repair(
            {**s.seller.ideal(s.space), price.name: s.seller_limits.minimum[price.name]}, s.seller, s.space
        )
        v = float(at_floor[price.name])
        for frame in RESTATED:
            x = rng.choice([_g(v), f"${_g(v)}", _words(v)[0]])
            out.append(Case("own offer at the floor, restated", s, at_floor, _wrap(rng, frame.format(p=x, P=_cap(x)))))
    return out
