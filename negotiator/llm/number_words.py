"""Which languages' number words a sentence holds, besides English.

text2num reads number words in German, French, Spanish, Italian, Portuguese and Dutch as
well as English, but each language is a pass of its own: ``negotiator.llm.numerals`` makes a
form of a sentence in a language only when ``languages_of`` finds that language's number
words in it, so an English message costs one reading.

French, Spanish and Portuguese write a number as separate words: a sentence holds the
language when one of its words is one of these. German, Italian and Dutch write one word
(sechshundertvierzehn): a sentence holds the language when it has a stem and a word made only
of number pieces. Words that are also English (six, once, due, zero, elf ...) are left out: a
sentence made of those alone is read in English only.
"""

from __future__ import annotations

import re

_WORDS = {
    "fr": frozenset(
        "une deux trois quatre cinq sept huit neuf dix onze douze treize quatorze quinze seize vingt vingts trente "
        "quarante cinquante soixante mille zéro virgule".split()
    ),
    "es": frozenset(
        "uno una dos tres cuatro cinco seis siete ocho nueve diez doce trece catorce quince dieciséis dieciseis "
        "diecisiete dieciocho diecinueve veinte veintiuno veintiún veintidós veintidos veintitrés veintitres "
        "veinticuatro veinticinco veintiséis veintiseis veintisiete veintiocho veintinueve treinta cuarenta "
        "cincuenta sesenta setenta ochenta noventa cien ciento doscientos doscientas trescientos trescientas "
        "cuatrocientos cuatrocientas quinientos quinientas seiscientos seiscientas setecientos setecientas "
        "ochocientos ochocientas novecientos novecientas millón millones cero coma".split()
    ),
    "pt": frozenset(
        "uma dois duas três quatro cinco seis sete oito nove dez onze doze treze catorze quatorze quinze dezasseis "
        "dezesseis dezassete dezessete dezoito dezanove dezenove vinte trinta quarenta cinquenta sessenta setenta "
        "oitenta noventa cem cento duzentos duzentas trezentos trezentas quatrocentos quatrocentas quinhentos "
        "quinhentas seiscentos seiscentas setecentos setecentas oitocentos oitocentas novecentos novecentas "
        "milhão milhões vírgula".split()
    ),
}
_COMPOUNDS = {
    "de": (
        "eins zwei drei vier fünf sechs sieb acht neun zehn zwölf zig ßig ssig hundert tausend komma million",
        "ein|eins|eine|zwei|drei|vier|fünf|sechs|sech|sieben|sieb|acht|neun|zehn|elf|zwölf|zwanzig|dreißig|"
        "dreissig|vierzig|fünfzig|sechzig|siebzig|achtzig|neunzig|hundert|tausend|und|null|komma|millionen?",
        "elf|null|million",
    ),
    "it": (
        "uno quattro cinque sette otto nove dieci undici dodici tredici quindici sedici dicias diciott diciann vent "
        "trent quarant cinquant sessant settant ottant novant cento mille mila milion virgola",
        "uno|una|un|due|tre|tré|quattro|cinque|sei|sette|otto|nove|dieci|undici|dodici|tredici|quattordici|"
        "quindici|sedici|diciassette|diciotto|diciannove|venti?|trenta?|quaranta?|cinquanta?|sessanta?|"
        "settanta?|ottanta?|novanta?|cento|mille|mila|milion[ei]|zero|virgola",
        "un|due|zero",
    ),
    "nl": (
        "twee drie vier vijf zes zeven acht negen tien twaalf dertien veertien twintig dertig veertig vijftig "
        "zestig zeventig tachtig negentig honderd duizend miljoen komma nul",
        "een|één|twee|drie|vier|vijf|zes|zeven|acht|negen|tien|elf|twaalf|dertien|veertien|vijftien|zestien|"
        "zeventien|achttien|negentien|twintig|dertig|veertig|vijftig|zestig|zeventig|tachtig|negentig|honderd|"
        "duizend|en|ën|miljoen|nul|komma",
        "een|en|elf",
    ),
}
_STEMS = {lang: tuple(stems.split()) for lang, (stems, _, _) in _COMPOUNDS.items()}
_COMPOUND = {
    lang: re.compile(rf"\b(?!(?:{common})\b)(?:{pieces})+\b") for lang, (_, pieces, common) in _COMPOUNDS.items()
}
_PUNCTUATION = ".,;:!?¡¿()[]\"'«»…"
_SIX_CENTS = re.compile(r"\b(?:six|sept|huit|neuf) cents?\b")


def languages_of(text: str) -> list[str]:
    """The languages besides English whose number words ``text`` holds (lower case, hyphens
    between words as spaces, as ``negotiator.llm.numerals`` prepares it): de, fr, es, it, pt, nl."""
    words = {w.strip(_PUNCTUATION) for w in text.split()}
    out = [lang for lang, vocab in _WORDS.items() if not vocab.isdisjoint(words)]
    if "fr" not in out and "cent" in text and _SIX_CENTS.search(text):
        out.append("fr")  # six cents: 600 in French
    out += [lang for lang, stems in _STEMS.items() if any(s in text for s in stems) and _COMPOUND[lang].search(text)]
    return out


__all__ = ["languages_of"]
