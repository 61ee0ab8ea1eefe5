"""The vetted vocabulary: the words a seller's message may use besides its listing's own.

The grounding patterns name the failure families measured on the embedded model's output
(a claimed deal, a refund, a fee, a date...), but a small model writes new nonsense on every
run: "Let's go to the restaurant!", "Please make your reservation at the hotel." name no
family a pattern knows. So the guard also reads each sentence the other way round: every
word must be one a business can stand behind in any listing (the words of bargaining and of
plain sales talk, below), or a word of this listing (its product's name, description and
policies, its issues, options and units, its currency) or of the business's instructions.
A sentence with any other word is a claim the business never wrote, and goes.

The list is English and deliberately short. What is left out on purpose: money matters
beyond the price (refund, fee, tax, deposit, cash, card, bank), time beyond the terms (days
of the week, months, today, tomorrow), places and contact (hotel, store, phone, email,
visit), goods beyond the listing (gift, bonus, free). A listing or policy that names one of
them brings it back for that listing. Words are read in lower case with a light stemming
("offers", "offered", "offering" are "offer"); numbers are the consistency check's and the
price check's business, not this one's.
"""

from __future__ import annotations

import re

_WORDS = """
# the grammar: articles, pronouns, auxiliaries, prepositions, conjunctions
a an the this that these those it its it's itself i me my mine myself we us our ours ourselves
you your yours yourself yourselves they them their theirs he she his her who whom whose what
which whatever whichever someone anyone everyone something anything everything nothing one ones
am is are was were be been being have has had having do does did doing done will would shall
should can could may might must ought i'm i'd i'll i've we're we'd we'll we've you're you'd
you'll you've they're that's there's here's what's let's let isn't aren't wasn't weren't don't
doesn't didn't can't couldn't won't wouldn't shouldn't haven't hasn't hadn't cannot
at by for from in into of on onto to with within without about above below over under up down
out off through between per than as like across after before around toward towards against
beyond along near upon via
and or but so if because while although though yet nor then also either neither both whether
not no yes very just only still even too already again now here there really quite rather
much more most less least well maybe perhaps certainly definitely indeed almost enough exactly
simply truly fully right ahead away back together further instead each every all any some none
other another such same own few many lot lots bit little how where when why once ever never
always usually often soon later currently actually especially hopefully honestly frankly
basically overall surely sure anyway however otherwise therefore thus else least far close
# bargaining
offer counteroffer counter proposal propose suggest suggestion price pricing priced cost value
worth term terms deal bid position move step round table middle halfway meet concession concede
compromise budget limit range fair reasonable competitive final last best better good great
first second third next new current standing opening closing hold stay firm flexible room
lower higher low high lowest highest cheaper cheap expensive premium bottom top line match
quote accept decline consider agree counter option choice choose package combination bundle
include included includes without total unit units each amount number sum extra
whole full part half base standard plan level tier rate
# the move and the talk around it
thank thanks appreciate interest interested glad happy pleased delighted hope hoping sure sorry
afraid understand see know think believe feel want wish need like love look forward help
work try get give make take keep go come find decide please welcome hello hi hey dear okay ok
excellent wonderful perfect nice fine fantastic lovely solid strong reliable
quality product item service support business buyer seller customer client party side
offer deal say tell talk discuss hear ask answer reply respond
put set leave bring show stand wait start end finish continue change adjust improve reduce
raise increase lower drop cut go move reach meet close pass
time moment way point case idea question mind thought note chance
much many lot plenty enough little bit more less
happy glad ready able willing open possible likely unfortunately afraid tight
fair honest serious real clear simple easy hard difficult
pay paying payment buy buying sell selling sale
per cent percent
one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
day days week weeks month months year years
delivery deliver delivered warranty quantity
list listed listing goodbye bye leave rest longer shorter version decision receive received
discount details detail important probably response mistake short realistic place
# an ordinal's ending once its digits are read apart ("758st offer")
st nd rd th
# how a fluent model talks its way to a middle (none of it promises anything)
settle somewhere somehow anywhere patience patient acceptable slightly satisfied satisfy sense
fit suit prefer preference assume guess expect mean matter concern worry certain unlikely
instance example favor favour gap bridge difference split effort deserve flexibility generous
tough push stretch request accommodate arrangement figure totally completely
entirely perfectly mutual mutually beneficial win everyone fairly reasonably
seriously genuinely particularly given regarding roughly approximately precisely nearly
# irregular forms the stemming does not reach
made gave given took taken got came said told thought felt saw seen knew known kept left meant
found chose chosen held met went gone better best worse worst paid
# the strategy's own sentences (a test holds every one of them to this list)
long restate agreement
"""

VETTED: frozenset[str] = frozenset(w for line in _WORDS.splitlines() if not line.startswith("#") for w in line.split())

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SUFFIXES = ("'s", "’s", "ing", "ed", "es", "s", "ly", "er", "est")
# The suffixes that inflect a word without making another: "charger" is no form of "charge".
INFLECTIONS = ("'s", "’s", "ing", "ed", "es", "s")


def words(text: str) -> list[str]:
    """The words of ``text``, lower case, without digits (``"net60"`` gives ``"net"``)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def stems(word: str, suffixes: tuple[str, ...] = _SUFFIXES) -> set[str]:
    """``word`` and what it may be an inflection of ("offers", "offered" -> "offer"; "closing" -> "close");
    with ``INFLECTIONS`` only, not what it may derive from ("charger" stays "charger")."""
    out = {word}
    for _ in range(2):  # "offerings" -> "offering" -> "offer"
        for w in list(out):
            for suffix in suffixes:
                if w.endswith(suffix) and len(w) - len(suffix) >= 2:
                    root = w[: -len(suffix)]
                    out |= {root, root + "e"}
                    if len(root) > 2 and root[-1] == root[-2]:  # "stopped" -> "stop"
                        out.add(root[:-1])
                    if root.endswith("i"):  # "replies" -> "reply"
                        out.add(root[:-1] + "y")
    return out


class Vocabulary:
    """The vetted words plus those of one listing (and the business's own text)."""

    def __init__(self, *texts: str):
        own: set[str] = set()
        for text in texts:  # the listing's words as they are inflected: its "charger" lets no "charge" pass
            for w in words(text):
                own |= stems(w, INFLECTIONS)
        self.known = VETTED | own

    def unknown(self, sentence: str) -> list[str]:
        """The words of ``sentence`` that neither the vetted list nor the listing holds."""
        return [w for w in words(sentence) if len(w) > 1 and not (stems(w) & self.known)]


__all__ = ["INFLECTIONS", "VETTED", "Vocabulary", "stems", "words"]
