"""Grounding: the seller says only what its listing and its move hold.

What a seller may say is written down: the listing's facts (the product's name, description
and the policies the business lets it cite, the issues and their options, the currency), the
terms of its own move, and the buyer's standing terms named as theirs. A sentence that goes
beyond them is a commitment the business never made, and the guard removes it:

* ``claims_deal``: a counter-offer or a walk-away that says it accepted or that the item is sold,
  or tells a deal in its own words ("We've just reached an agreement.", "The desk is yours."), or
  tells the deal done ("Deal done.", "You've got yourself a deal."; "a good deal" tells none);
* ``invites_offers``: a walk-away that asks for more offers;
* ``other_terms``: an acceptance that adds a condition ("Deal, but with 20 more seats");
* ``commitment``: refunds, returns, gifts, fees, taxes, deposits, eligibility or legal
  conditions, payment instruments, other currencies, dates and deadlines, contact or
  off-platform steps, something for nothing ("at no cost", "take fifty off"), unless the
  listing's own text names them in whole words ("charger" names no "charge");
* ``buyer_role``: the seller speaking as the buyer ("I will pay", "I'd like to purchase");
* ``annotation``: template or prompt residue ("{{note: ...", "[offer]", "TODO");
* ``price``: a price-like number (next to a currency, or of a price's magnitude in digits or
  words, or a bare decimal) that is neither the move's nor the buyer's standing terms, or a
  garbled one; the buyer's price given as the seller's ("You can have it for 560." offering
  880); a unit price given as the whole order's ("The total is 40 USD.");
* ``contradiction``: an issue of named options given a number ("assembly 3"), the buyer's
  value of an issue given as the seller's ("We deliver in 7 days." offering 14), or an option
  of the terms denied ("Upfront payment not needed." offering upfront);
* ``unvetted``: a word that neither the vetted vocabulary (``negotiator.llm.vocabulary``) nor
  the listing nor the business's instructions holds: new nonsense no pattern names;
* ``cut``: the message's last sentence stops mid-way;
* ``repeated``: a sentence said three times or more in the message (a model looping to its
  token limit: "Here is my offer. Here is my offer. ..."); the first one stays.

This is a check of English words and patterns: it reads the failure families measured on the
embedded model's output, then every word (docs/guard.md says what it catches and what it
cannot). When every sentence goes, the strategy's own sentence for the move stands in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from text_to_num import alpha2digit

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.issues import DiscreteIssue, NumericIssue, Offer
from ..party import AnyAction, PartyView
from .consistency import restated
from .secrecy import numbers, safe_message, sentences
from .vocabulary import INFLECTIONS, VETTED, Vocabulary, stems

_CLAIMS_DEAL = re.compile(
    r"\b(?:i|we)(?:'ve| have)?\s+(?:now\s+)?accept(?:ed)?\b(?!\s+(?:only|nothing|less|anything below))"
    r"|\b(?:we\s+have|it'?s|that'?s)\s+a\s+deal\b|^\s*deal\s*[.!]?\s*$|\b(?:is|now|been)\s+sold\b"
    r"|\bagreed\b(?!\s+(?:to\s+)?(?:on\s+)?(?:yet|soon))|\bdeal\s+is\s+done\b|\bcongratulations\b"
    r"|^\W*sold\b|\bwe\s+have\s+(?:an\s+)?agreement\b|\b(?:offer|it|that|payment)\s+(?:is|has\s+been)\s+accepted\b"
    r"|\bpurchase\s+(?:decision\s+)?has\s+been\s+made\b|\b(?:buyer|you|they)\s+(?:has|have)\s+(?:now\s+)?accepted\b"
    r"|\bthank\s+you\s+(?:so\s+much\s+|very\s+much\s+)?for\s+(?:your\s+)?(?:purchas|buying|your\s+order|doing\s+business)"
    r"|\b(?:i'?ll|i\s+will|we'?ll|we\s+will)\s+(?:happily\s+|gladly\s+)?take\s+your\s+(?:option|offer|terms)\b"
    r"|\b(?:and|we|i|will)\s+accept\s+(?:this|your|the)\s+offer\b|\boffer\s+accepted\b|\bfinal\s+agreement\b"
    r"|\bthanks?\s+(?:you\s+)?(?:very\s+much\s+|so\s+much\s+)?for\s+(?:taking|accepting|agreeing\s+to)\s+(?:our|my|this|the)\s+(?:\w+\s+)?(?:offer|deal)\b"
    r"|\bfor\s+placing\s+(?:an|your)\s+order\b"
    r"|\bthanks?\s+(?:you\s+)?(?:\w+\s+)?for\s+(?:the|your)\s+(?:deposit|payment|money|order|purchase)\b"
    # thanks for a step only a sale has: paying, choosing us, buying, ordering, signing, booking
    r"|\bthanks?\s+(?:you\s+)?(?:\w+\s+)?for\s+(?:your\s+)?(?:pay|choos|purchas|buy|order|agree|accept|sign|book|confirm|select|shopp)\w*"
    r"|\bmade\s+you\s+a\s+deal\b"
    r"|\bthanks?\s+(?:you\s+)?(?:\w+\s+)?for\s+taking\s+(?:an|our|my|the|this)\s+offer\b"
    r"|\b(?:i'?d|i\s+would|we'?d|we\s+would)\s+(?:\w+\s+)?like\s+to\s+accept\s+(?:this|your|the)\b"
    # a sale told without a deal's own words: "It is a deal.", "Done deal.", "The desk is yours.", "You win."
    r"|\b(?:it|that|this)\s+is\s+a\s+deal\b|\bdone\s+deal\b|\bconsider\s+it\s+done\b|\byou\s+win\b"
    r"|\b(?:it|this|that|the\s+(?!(?:choice|decision|call|pick|move|turn|pleasure)\b)\w+)(?:'s|\s+is|\s+are)\s+(?:all\s+|now\s+)?yours\s*[.!]*\s*$"
    r"|\bthanks?\s+(?:you\s+)?(?:\w+\s+)?for\s+(?:the|this|our)\s+deal\b"
    r"|\bthanks?\s+(?:you\s+)?(?:\w+\s+){0,2}for\s+(?:taking|buying)\s*[.!]*$"  # "Thank you very much for taking."
    r"|\b(?:i|we)(?:'ll|\s+will|\s+shall)\s+(?:gladly\s+|happily\s+)?accept\s+(?:it|this|that|yours|your)\b",  # on a counter
    re.I,
)
# The words a deal is told with, in any phrasing ("We've just reached an agreement.", "We're
# pleased to accept.", "I have sold it to you."): on a counter or a walk-away they claim one
# unless the sentence asks, hopes, looks ahead or denies ("If it is accepted", "Agreed?").
_CLAIM_WORDS = re.compile(
    r"\b(?:accepted|agreed|agreement|sold|purchased|bought|congratulations)\b"
    r"|\b(?:pleased|happy|glad|delighted|honou?red|pleasure)\s+to\s+(?:accept|agree)\b"
    r"|\b(?:i|we)\s+(?:\w+\s+)?agree\b|\bagree\s+to\s+(?:it|this|that)\b"
    # a deal told done: the word "deal" beside a word that completes it ("Deal done.", "You've got
    # yourself a deal.", "deal sealed"); "a good deal", "let's make a deal" complete nothing
    r"|\bdeal\s+(?:is\s+|was\s+|has\s+been\s+)?(?:done|made|closed|struck|sealed|settled|complete[d]?|finali[sz]ed)\b"
    r"|\b(?:done|closed|sealed|struck|settled|made|clinched)\s+(?:the\s+|a\s+|our\s+|this\s+|that\s+)?deal\b"
    r"|\b(?:got|have|has)\s+(?:(?:yourself|yourselves|ourselves|myself|you|us|me)\s+)?a\s+deal\b"
    r"|\b(?:your|the|this)\s+offer\s+is\s+(?:good|great|fine|acceptable|perfect|ok(?:ay)?)(?:\s+enough)?"
    r"(?:\s+for\s+(?:you|me|us))?\s*[.!]*\s*$|\bhappy\s+to\s+receive\b",
    re.I,
)
_NOT_A_CLAIM = re.compile(
    r"\?|\b(?:not|no|never|cannot|nothing|if|once|when|until|unless|whether|hope|hoping|forward"
    r"|would|could|can|will\s+you|want|wish|like\s+to|ready|yet|before|after)\b|n't\b",
    re.I,
)
_INVITES = re.compile(
    r"\b(?:make|send|give)\s+(?:me\s+)?(?:an?|another|your|a\s+better|a\s+new)\s+(?:offer|counter)"
    r"|\blet\s+me\s+know\b|\bcounter[- ]?offer\b|\bmy\s+door\s+is\s+open\b|\bstill\s+open\s+to\b"
    r"|\bcome\s+back\b|\bchange\s+your\s+mind\b|\breach\s+out\b|\bget\s+back\s+to\s+me\b|\bany\s*time\b",
    re.I,
)
# A question that asks from its clause's first word ("Do we have a deal?", "So, is it a deal?").
_ASKS = re.compile(
    r"(?:^|[,;:]\s*)\W*(?:do|does|did|is|are|was|have|has|can|could|shall|should|will|would)\b[^,;:]*$", re.I
)
_CONDITIONAL = re.compile(r"\b(?:if|once|when|until|unless)\b[^.!?]*$", re.I)
# A figure under 1 where no price is that small: the seller's private worth of an offer ("You pay 0.53 more").
_WORTH = re.compile(r"(?<![\d.,$€£])0\.\d{1,3}\b")
# An acceptance takes the buyer's terms as they stand: a condition added to it proposes others.
_OTHER_TERMS = re.compile(
    r"\b(?:but|provided|as\s+long\s+as|on\s+(?:the\s+)?condition|only\s+if|in\s+exchange|instead)\b"
    r"|\bno\s+deal\b|\bno\s+offer\s+accepted\b|\bno\s+longer\b|\bnot\s+quite\b|\bcan(?:no|')t\s+do\s+it\b|\b(?:can'?t|cannot|won'?t|will\s+not|do\s+not|don'?t)\s+accept\b|\bno\s+longer\s+(?:available|accepting)\b"
    r"|\b(?:write|send|make|give)\b[^.!?]*\b(?:your|an?|another|new|better)\s+(?:offer|counter)\b"
    r"|\bfor\s+accepting\b|\bplease\s+accept\b|\b(?:do\s+not|don'?t)\s+buy\b"
    r"|\b(?:we|i)(?:'ll|\s+will|\s+can)?\s+(?:also\s+)?(?:include|add|throw\s+in)\b"  # "Deal, and we include assembly."  # the seller's own terms held out as what was accepted
    # "Here is my offer." on an acceptance puts the seller's own terms forward (two labellers, 11 of 11)
    r"|\bhere(?:'s|\s+is|\s+are)\s+(?:my|our)\s+(?:\w+\s+)?(?:offers?|proposals?|counter)\b",
    re.I,
)  # ...and one that says it does not accept contradicts its own move
_BUYER_ROLE = re.compile(
    r"\bI(?:'ll|\s+will|\s+would|'d|\s+can|\s+am\s+willing\s+to|'m\s+willing\s+to|\s+am\s+ready\s+to)?"
    r"\s+(?:\w+ly\s+)?(?:like\s+to\s+)?(?:pay|purchase|buy)\b(?!\s+(?:back|out))"
    r"|\bhere(?:'s|\s+is)\s+(?:a|my|the|your)\s+(?:payment|check|cheque|money|cash)\b"
    r"|\bbuy\s+(?:it\s+)?from\s+you\b|\b(?:give|pay|send)\s+you\s+(?:\$\s?\d|\d[\d,.]*\s*(?:dollars|usd|eur|euros))"
    r"|\b(?:my|our)\s+(?:own\s+)?budget\b|\bglad\s+to\s+purchase\b|\bpurchase\s+the\s+item\b"
    r"|\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:\w+\s+){0,2}to\s+(?:buy|purchase)\b"
    r"|\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+buying\b|\bwe(?:'d|\s+would)\s+like\s+to\s+(?:buy|purchase)\b"
    r"|\b(?:i|we)\s+(?:need|have)\s+to\s+pay\b|\blet\s+(?:me|us)\s+(?:take|buy|have)\s+the\b"
    # the roles turned round: the buyer told to sell, the seller spoken of as another party
    r"|\byou\b[^.!?]{0,24}\bsell(?:s|ing)?\b|\bhappy\s+selling\b|\bthe\s+seller\b|\boffered\s+(?:it\s+)?to\s+me\b"
    r"|\byou(?:'re|\s+are)\s+(?:a|the)\s+seller\b|\bour\s+buyer\b",  # "You are a seller.", "an offer to our buyer"
    re.I,
)
_ANNOTATION = re.compile(
    r"\{\{|\}\}|\[\[|\]\]|\{\s*note\b|\bnote\s*:|\bTODO\b|<\s*/?[a-z][a-z0-9_]*\s*>|\[(?:offer|terms|price|name)\]"
    r"|\bworth\s+[01]?\.\d+\b|\boption\s+[A-H]\b(?!-)|\(\s*[A-H]\s*\)|\butility\b"  # the seller's private figures, its menu's ids
    r"|[\"”]\s*\.?\s*\}|\[(?:net\d+|upfront|none)\]|\.{3}\s*\(\d+\)"
    r"|:\s*(?:\.{3}|…)\s*$|^\s*(?:\.{3}|…|\(\d+\)\.?)\s*$|\([^)]*\b[a-z]+_[a-z]+\b[^)]*\)|\(\s*name\s*\+|\b[a-z]+_[a-z_]+\(\)|\bmake_offer\b|\b[a-z]+_[a-z_]+\s*=",  # a placeholder where the terms go  # the answer format's residue: '”.}', '[net60]'
    re.I,
)
# Each family: the words that make a commitment; the listing's own text naming any of them lets it pass.
_COMMITMENTS: dict[str, str] = {
    "refund": r"\brefund\w*|\bnon[- ]?refundable\b|\bmoney[- ]back\b",
    "returns": r"\breturn(?:s|ed|able)?\b(?!\s+(?:to\s+)?(?:you|the\s+table|offer))|\bexchange\s+polic",
    "gift": r"\bgift\w*|\bfree\s+(?:gift|bonus|extra)\b",
    "any_price": r"\b(?:any|whatever)\s+price\b|\b(?:match|beat)\s+(?:any|every|all)\b(?=[^.!?]*\b(?:price|quote|offer|deal|competitor|bid|lower|cheaper|better)s?\b)|\bprice\s+you\s+(?:like|want|choose)\b"
    r"|\b(?:at\s+)?an?\s+[\d.,]+\s*%?\s+discount\b|\bwithout\s+(?:the\s+|any\s+)?payment\b|\d\s*%\s*(?:off|discount)\b",
    # something for nothing, in vetted words: "at no cost", "costs you nothing", "take fifty off", "two for one"
    "extras": r"\bat\s+no\s+(?:extra\s+|additional\s+)?(?:cost|charge)\b|\bno\s+(?:extra\s+|additional\s+)?charge\b"
    r"|\b(?:not|never|won'?t|will\s+not)\s+(?:going\s+to\s+|be\s+)?charg\w*"
    r"|\b(?:costs?|pay|charge)\s+(?:you\s+|me\s+|us\s+)?nothing\b|\bfor\s+nothing\b|\b(?:per\s*cent|percent)\s+(?:off|discount)\b"
    r"|\b(?:take|knock|shave|get|give\s+you|cut)\s+(?!it\b)(?:[\w$.,%]+\s+){1,3}off\b(?!\s+(?:the\s+table|to)\b)"
    r"|\bpay\s+(?:me\s+|us\s+)?(?:later|half|nothing)\b|\bhalf\s+back\b|\b(?:two|2)\s+for\s+(?:one|1|the\s+price)\b"
    r"|\b(?:include|throw\s+in|add|get)\s+(?:a\s+second|another|an\s+extra|(?:two|three)(?!\s+(?:days?|weeks?|months?|years?)\b))\b|\beverything\s+(?:is\s+)?included\b"
    r"|\b(?:two|three|a\s+second|another)\s+\w+\s+for\s+(?:that|this|the\s+same)\s+price\b",
    "stock": r"\bout\s+of\s+stock\b|\bin\s+stock\b",
    "meeting": r"\bgo\s+to\s+(?:your|my|our)\s+place\b|\bget\s+together\b|\brestaurant\b|\bhotel\b|\breservation\b|\bsign\s+below\b|\bphotos?\b|\bvideos?\b"
    r"|\bby\s+(?:text|calling|phone)\b",
    "shipping": r"\bfree\s+(?:shipping|delivery|installation)\b|\b(?:shipping|delivery)\s+(?:is\s+)?(?:free|on\s+(?:me|us))\b",
    "fees": r"\bfees?\b|\bsurcharge\w*|\bhandling\s+charge",
    "tax": r"\btax(?:es)?\b|\bvat\b|\bduty\b|\bduties\b",
    "deposit": r"\bdeposit\w*|\bdown\s+payment\b|\bupfront\b|\bin\s+advance\b",
    "eligibility": r"\bresiden(?:ce|t)\s+permit\b|\bcredit\s+check\b|\bvalid\s+(?:id|licen[cs]e|passport)\b|\beligib\w*"
    r"|\blegal(?:ly)?\b|\bcontract\b|\bno\s+exceptions\b|\bterms\s+and\s+conditions\b",
    "payment": r"\bcredit\s+card\b|\bdebit\s+card\b|\bpaypal\b|\bbank\s+transfer\b|\bwire\b|\bcash\b|\bcheque\b"
    r"|\bcheck\s+payment\b|\bbitcoin\b|\bcrypto\w*|\bfirst\s+bill\b|\binstal(?:l)?ments?\b|\bfinanc\w+"
    r"|\bzelle\b|\bvenmo\b|\bwestern\s+union\b|\bmoney\s+order\b|\bsend\s+(?:me\s+)?(?:the\s+)?(?:money|payment|funds)\b"
    r"|\bhalf\s+(?:now|up\s*front|on\s+delivery|later|when)\b|\bpay\s+(?:the\s+)?(?:rest|remainder|balance)\b"
    r"|(?<!if )\byou\s+(?:must|need\s+to|have\s+to|will\s+need\s+to)\s+pay\b"
    r"|\b(?:start|begin)\s+(?:making\s+)?(?:a\s+|the\s+|your\s+)?payments?\b|\bmake\s+(?:a|the|your)\s+payment\b"
    r"|\btransfer\w*|\bbank\s+account\b|\b(?:you\s+have|you'?ve|has\s+been)\s+paid\b|\bpayment\s+(?:is\s+)?received\b",
    "dates": r"\b(?:by|until|before|on)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight"
    r"|next\s+week|the\s+end\s+of)\b|\bexpires?\b|\bdeadline\b|\bonly\s+(?:today|this\s+week)\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
    r"|\b(?:stands?|valid|good|open)\s+(?:for|until)\s+(?:\d|an?\b|one|two|three|the\s+next|today|tomorrow|this)|\b\d+\s+(?:hours?|days?)\s+only\b|\bnext\s+(?:month|year)\b"
    r"|\b(?:january|february|march|april|june|july|august|september|october|november|december)\s+\d{1,2}\b"
    r"|\bnext\s+(?:business\s+|working\s+)?day\b|\b(?:this|next)\s+week\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\bo'?clock\b"
    r"|\b(?:ship|deliver|send)\w*\s+(?:it\s+)?(?:today|tomorrow|tonight)\b",
    "contact": r"\be-?mail\b|@\w|\bphone\b|\bcall\s+(?:me|us)\b|\bwhatsapp\b|\btext\s+me\b|\bwebsite\b|https?://|www\."
    r"|\bgive\s+(?:me|us)\s+a\s+call\b|\b(?:my|our)\s+(?:office|showroom|store|warehouse|premises)\b|\bcome\s+(?:in|by|over)\b|\bvisit\s+(?:us|our|me)\b|\bin\s+person\b|\bcontact\s+(?:me|us)\b",
}
_COMMITMENT_RE = {family: re.compile(pattern, re.I) for family, pattern in _COMMITMENTS.items()}
_CURRENCY = {
    "USD": r"\$|(?<![a-z])usd\b|\bdollars?\b|\bbucks\b",  # "6USD": a code glued to its amount
    "EUR": r"€|(?<![a-z])eur\b|\beuros?\b",
    "GBP": r"£|(?<![a-z])gbp\b|\bpounds?\b",
    "JPY": r"¥|(?<![a-z])jpy\b|\byen\b",
    "CHF": r"(?<![a-z])chf\b|\bfrancs?\b",
    "INR": r"₹|(?<![a-z])inr\b|\brupees?\b",
}
# Words that say a value is the buyer's, or refuse it ("you asked for 1070", "I can't do 1070").
_WHOSE = re.compile(
    r"\b(?:you|your|yours|buyer|asked|offered|wanted|want|requested|not|no|never|cannot|too|below|above|under|than"
    r"|instead|from|rather)\b|n't\b",
    re.I,
)
# ... and those of them that still say so when the value is named anywhere in the sentence: "you"
# alone does not ("You can have it for 507." gives the buyer's price as the seller's).
_THEIRS = re.compile(
    r"\b(?:your|buyer|asked|asking|offered|wanted|requested|said|suggested|proposed|not|no|never|cannot|too|below"
    r"|above|under|than|instead|from|rather)\b|n't\b",
    re.I,
)
# Number words a count is written in ("three days", "twenty units"): no price.
_SPELLED_COUNT = re.compile(
    r"\b(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundred|thousand|million|and|a)[\s-]+)+(?=(?:days?|weeks?|months?|years?|yrs?"
    r"|hours?|minutes?|seats?|units?|guests?|people|pieces?|items?|licen[cs]es?|users?|percent|per\s+cent)\b)",
    re.I,
)
# What says an amount is for everything: "in total", "all 1000 units for", "all of it", "the whole order".
_TOTAL = re.compile(
    r"\b(?:total|in\s+all|altogether|all\s+of\s+(?:it|them)|it\s+all|all\s+\d[\d,]*|everything|the\s+whole|for\s+all)\b"
    r"|\b\d[\d,]*\s+(?:units?|seats?|items?|pieces?)\s+for\b",
    re.I,
)
_PER_UNIT = re.compile(r"\b(?:per|a|each|every)\s+(?:unit|seat|item|piece|box|guest|one)\b|\beach\b|\bapiece\b|/", re.I)
_PAYING = re.compile(r"\b(?:pay|pays|paid|paying|payment|payments|payable)\b", re.I)
# A word that denies what its clause says ("not needed", "no upfront payment", "without"); firmness
# ("not negotiable") denies nothing of the terms.
_NEGATION = re.compile(r"\b(?:not|no|never|without|nor|neither|none)\b(?!\s+(?:negotiable|up\s+for))|n't\b", re.I)
_CLAUSES = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s|\bbut\b", re.I)
# A number no reader can take at its word: "1,3033", "1,30,33".
_GARBLED = re.compile(r"\d,\d{4,}|\d,\d{1,2},\d")
# A span of time: "in 125 days", "2 weeks", "a 3-year plan".
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)"
)
_SPAN = re.compile(
    rf"(?<![\d.,])(\d+(?:\.\d+)?|\b(?:a|an|(?:{_NUMBER_WORD}(?:[\s-]+and)?[\s-]+)*{_NUMBER_WORD}))[\s-]?"
    r"(days?|weeks?|months?|years?|yrs?)\b",
    re.I,
)
_IN_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365, "yr": 365}
# The listing's currency in the words a message may spell it with.
_CURRENCY_WORDS = {
    "USD": ("dollar", "dollars", "bucks"),
    "EUR": ("euro", "euros"),
    "GBP": ("pound", "pounds"),
    "JPY": ("yen",),
    "CHF": ("franc", "francs"),
    "INR": ("rupee", "rupees"),
}
_BARE_NUMBER = re.compile(
    r"(?<![\w.,/:-])(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/:-]|\s*(?:%|percent|days?|weeks?|months?|years?|yrs?"
    r"|hours?|minutes?|seats?|units?|guests?|people|pieces?|pcs|items?|licen[cs]es?|users?|kg|lbs?|cm|mm|m\b|gb|tb|inch))",
    re.I,
)
# A last sentence that stops on a comma, a dash or a word that needs another after it was cut
# by the token limit ("Now take my last offer,"); a short unpunctuated "hi" or "Deal" was not.
_CUT = re.compile(
    r"(?:[,;:(\[{–—$€£-]|\b(?:and|or|but|so|to|the|a|an|of|for|with|my|your|our|their|its|at|in|on|by|from|into|about"
    r"|is|are|was|were|be|been|have|has|will|can|than|that|this|it|we|you|i|they|if|when|which|who|as|not|no)"
    r"|\b(?:and|or)\s+[a-z]+_[a-z_]+|\b(?:with|of|and|or|an?)\s+\d+|\bis\s+\d)\s*$"  # "Price and delivery_days", "service with 3"
    r"|:\s*(?:[a-z]\b)?\W{0,2}$"  # a colon with nothing after it: "Here is my offer: a.", "Here's your offer:."
    r"|[a-z]_\W{0,2}$",  # a name cut at its underscore: "Here's the sale_"
    re.I,
)
# A trailing ellipsis finishes nothing ("Here's our offer for..."): the sentence is judged without it.
_ELLIPSIS = re.compile(r"\s*(?:\.{2,}|…)\s*$")
# A condition with no end mark and nothing after it: "If you want to pay" (the token limit came first).
_DANGLING_IF = re.compile(r"^\s*(?:if|when|unless|because|although|once)\b[^,.!?;:]*$", re.I)
_DANGLING = re.compile(r"\b(?:you|we|i|they)'(?:ve|re|ll|d|m)\s*$", re.I)  # "Make sure you've"


@dataclass(frozen=True)
class Finding:
    reason: str  # one of the families in the module docstring
    sentence: str


class Grounding:
    """What one seller turn may say, from the seller's own view."""

    def __init__(self, view: PartyView, instructions: str = ""):
        self.view = view
        sc = view.scenario
        self.currency = sc.currency.upper()
        facts = [sc.product.name, sc.product.description, *getattr(sc.product, "policies", ())]
        self.listing_text = tuple(facts)
        for issue in sc.issues:
            facts.append(issue.name.replace("_", " "))
            facts += [str(o).replace("_", " ") for o in getattr(issue, "options", ())]
        # the words a commitment may cite, as their roots: "returns" lets "returned" pass
        self.fact_roots = {r for w in re.findall(r"[a-z]+", " ".join(facts).lower()) for r in stems(w, INFLECTIONS)}
        # The words a term's value ends on: options, units, issue names ("net60", "days", "guided").
        terms = [f"{i.name} {i.name.replace('_', ' ')} {i.unit}" for i in sc.issues]
        terms += [f"{o} {str(o).replace('_', ' ')}" for i in sc.issues for o in getattr(i, "options", ())]
        self.vocabulary = set(re.findall(r"[\w%-]+", " ".join([*terms, sc.currency]).lower()))
        # Every word a sentence may use: the vetted list, this listing's, the business's instructions'.
        self.words = Vocabulary(*facts, *terms, sc.currency, *_CURRENCY_WORDS.get(self.currency, ()), instructions)
        self.price_issues = [i for i in sc.issues if isinstance(i, NumericIssue) and "price" in i.name]
        self.prices_above_1 = all(i.low >= 1 for i in self.price_issues)
        # Each issue's name as a message may spell it ("payment terms", "payment_terms").
        self.names = {i.name: re.escape(i.name.replace("_", " ")).replace(r"\ ", r"[\s_]") for i in sc.issues}
        # An issue of named options given a number ("assembly 3", "payment terms 7"): a value no option holds.
        named = [
            self.names[i.name]
            for i in sc.issues
            if isinstance(i, DiscreteIssue) and not any(isinstance(o, (int, float)) for o in i.options)
        ]
        self.numbered_option = re.compile(rf"\b(?:{'|'.join(named)})\s*(?:is|of|=|:)?\s*\d", re.I) if named else None
        # ... or another issue's option ("delivery days net60").
        misplaced = []
        for i in sc.issues:
            others = {
                re.escape(str(o)).replace("_", "[ _]")
                for j in sc.issues
                if j is not i and isinstance(j, DiscreteIssue)
                for o in j.options
                if isinstance(o, str) and o not in getattr(i, "options", ())
            }
            if others:
                misplaced.append(rf"\b{self.names[i.name]}\s*(?:is|of|=|:)?\s*(?:{'|'.join(sorted(others))})\b")
        self.misplaced_option = re.compile("|".join(misplaced), re.I) if misplaced else None
        self.their_values = self._their_values()  # the buyer's standing values, as a counter must not claim them
        # A list of terms that ends on an issue's name without its value: "..., contract months 36, support."
        names = "|".join(self.names.values())
        self.bare_issue = re.compile(rf",\s*(?:{names})\s*[.!]?\s*$", re.I)
        # Issues counted in time ("delivery_days", "warranty_months"): a span a message names must be one of theirs.
        self.time_issues = [i for i in sc.issues if (getattr(i, "unit", "") or "").lower().rstrip("s") in _IN_DAYS]
        # The numbers a sentence counts with, not prices: "28 days", "1000 units", "seats 30", "deposit percent 50".
        counted = "|".join(self.names[i.name] for i in sc.issues if i not in self.price_issues) or "(?!)"
        self._counts = re.compile(
            rf"(?:\b(?:{counted})\s*(?:of|is|at|:|=)?\s*)?\d[\d,.]*\s*(?:%|(?:percent|per\s+cent"
            r"|days?|weeks?|months?|years?|yrs?|hours?|units?|seats?|guests?|people|pieces?|items?|users?)\b)"
            rf"|\b(?:{counted})\s*(?:of|is|at|:|=)?\s*\d[\d,.]*",
            re.I,
        )

    def findings(self, action: AnyAction) -> list[Finding]:
        """Every sentence of the action's message that the listing and the move do not back."""
        said = sentences(action.message or "")
        return [
            Finding(reason, sentence)
            for reason, sentence in zip(self._reasons(action, said), said, strict=True)
            if reason
        ]

    def _reasons(self, action: AnyAction, said: list[str]) -> list[str | None]:
        """The reason each sentence of ``said`` goes, or None where it stays."""
        allowed = self._allowed_numbers(action)
        reasons = [self._reason(action, sentence, allowed) for sentence in said]
        # A sentence said three times or more is a loop to the token limit, not emphasis ("Thank you.
        # Thank you."): the first one stays.
        keys = [" ".join(re.findall(r"\w+", sentence.lower())) for sentence in said]
        for k, key in enumerate(keys):
            if reasons[k] is None and key in keys[:k] and keys.count(key) >= 3:
                reasons[k] = "repeated"
        # The message ends on its last sentence that stays: cut ones go until a finished one ends it
        # ("Here is my offer: a." before a sentence the check removed is the end the buyer reads).
        for k in reversed(range(len(said))):
            if reasons[k] is None:
                if not self._cut(said[k]):
                    break
                reasons[k] = "cut"
        return reasons

    def _cut(self, sentence: str) -> bool:
        """A sentence that stops mid-way: on a comma, a word that needs another, an issue without its value
        (a trailing ellipsis does not finish it: "Here's our offer for...")."""
        bare = _ELLIPSIS.sub("", sentence)
        return bool(
            _CUT.search(bare)
            or _DANGLING_IF.search(bare)
            or _DANGLING.search(bare)
            or self._unfinished(sentence)
            or self.bare_issue.search(sentence)
        )

    def ground(self, action: AnyAction) -> tuple[AnyAction, list[Finding]]:
        """The action with the failing sentences removed (the strategy's sentence if none is left)."""
        said = sentences(action.message or "")
        reasons = self._reasons(action, said)
        found = [Finding(reason, sentence) for reason, sentence in zip(reasons, said, strict=True) if reason]
        if not found:
            return action, found
        kept = " ".join(s.strip() for s, reason in zip(said, reasons, strict=True) if reason is None).strip()
        return action.model_copy(update={"message": kept or own_sentence(action)}), found

    def _reason(self, action: AnyAction, sentence: str, allowed: list[float]) -> str | None:
        if isinstance(action, (MakeOffer, WalkAway)):
            claim = _CLAIMS_DEAL.search(sentence)
            # "Do we have a deal?" asks, it tells no sale ("We have a deal, right?" tells one)
            asks = claim and re.search(r"\?\W*$", sentence) and _ASKS.search(sentence[: claim.start()])
            if claim and not asks and not _CONDITIONAL.search(sentence[: claim.start()]):  # "If ... accepted, ..."
                return "claims_deal"
            claim = _CLAIM_WORDS.search(sentence)
            if claim and not _NOT_A_CLAIM.search(sentence) and not self._listed(claim.group()):
                return "claims_deal"
        if isinstance(action, WalkAway) and _INVITES.search(sentence):
            return "invites_offers"
        if isinstance(action, Accept) and _OTHER_TERMS.search(sentence):
            return "other_terms"
        if _ANNOTATION.search(sentence) or (self.prices_above_1 and _WORTH.search(sentence)):
            return "annotation"
        if _BUYER_ROLE.search(sentence):
            return "buyer_role"
        for pattern in _COMMITMENT_RE.values():
            m = pattern.search(sentence)
            if m and not self._listed(m.group()):
                return "commitment"
        for code, marker in _CURRENCY.items():
            if code != self.currency and re.search(marker, sentence, re.I) and not self._listed(code.lower()):
                return "commitment"  # another currency: a conversion the business never gave
        if self.numbered_option is not None and self.numbered_option.search(sentence):
            return "contradiction"
        if self.misplaced_option is not None and self.misplaced_option.search(sentence):
            return "contradiction"
        if self._negated_option(action, sentence):
            return "contradiction"
        if self._stray_price(action, sentence, allowed) or _GARBLED.search(sentence):
            return "price"
        theirs = self._theirs_as_own(action, sentence)
        if theirs is not None:
            return theirs
        if self._stray_time(sentence, action):
            return "commitment"  # a time the terms do not hold: a date the business never gave
        if self.words.unknown(sentence):
            return "unvetted"
        return None

    def _negated_option(self, action: AnyAction, sentence: str) -> bool:
        """An option of the terms denied in the clause that names it: "Upfront payment not needed."
        offering upfront payment, "No upfront payment." The buyer reads the opposite of the move."""
        terms: Offer | None = getattr(action, "terms", None) or (
            self.view.standing_offer if isinstance(action, Accept) else None
        )
        for value in (terms or {}).values():
            if not isinstance(value, str) or _NEGATION.search(value.replace("_", " ")):
                continue  # an option that is itself an absence ("none") is not denied by "no"
            option = re.escape(value).replace("_", "[ _]")
            for clause in _CLAUSES.split(sentence):
                if re.search(rf"\b{option}\b", clause, re.I) and _NEGATION.search(clause):
                    return True
        return False

    def _unfinished(self, sentence: str) -> bool:
        """A long last sentence with no end mark that does not end on a term's value: "If you wish
        to purchase this offer, pay no more than the amount of the first item". A list of terms
        left unpunctuated ("..., payment terms net60") ends on a value and is finished."""
        words = re.findall(r"[\w.%-]+", sentence.lower())
        if len(words) < 6 or re.search(r"[.!?…)\"'”»]\s*$", sentence):
            return False
        last = words[-1].strip(".")
        return not re.fullmatch(r"[\d.,%-]+", last) and last not in self.vocabulary

    def _listed(self, words: str) -> bool:
        """Whether the listing's own text names this commitment: each of its words, whole or inflected
        ("returned" for "Returns accepted", "refund" for "Refunds"), is a word of the listing; "charge" is
        not "charger" (a ``case_and_charger`` option lets no "No charge for delivery." pass)."""
        said = [w for w in re.sub(r"[^a-z]", " ", words.lower()).split() if len(w) > 2]
        return bool(said) and all(
            stems(w, INFLECTIONS) & self.fact_roots for w in said
        )  # "1:30 pm" has no word to find

    def _allowed_numbers(self, action: AnyAction) -> list[float]:
        values: list[float] = []
        for offer in (getattr(action, "terms", None), self.view.standing_offer, self.view.own_last_offer):
            for v in (offer or {}).values():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    values.append(float(v))
        if isinstance(action, (MakeOffer, Accept)):  # a total: unit price times quantity
            terms: Offer | None = getattr(action, "terms", None) or self.view.standing_offer
            if terms:
                prices = [float(v) for k, v in terms.items() if "price" in k and isinstance(v, (int, float))]
                counts = [float(v) for k, v in terms.items() if k in ("quantity", "seats", "units", "guests")]
                values += [p * q for p in prices for q in counts if isinstance(q, float)]
        list_price = self.view.scenario.product.list_price
        if list_price is not None:
            values.append(float(list_price))  # what the shop shows
        return values

    def _money(self, action: AnyAction) -> list[float]:
        """The amounts of money on the table: the price issues' values, totals, the list price."""
        issues = {i.name for i in self.price_issues}
        values = [
            float(v)
            for offer in (getattr(action, "terms", None), self.view.standing_offer, self.view.own_last_offer)
            for k, v in (offer or {}).items()
            if k in issues and isinstance(v, (int, float))
        ]
        terms: Offer | None = getattr(action, "terms", None) or self.view.standing_offer
        counts = [float(v) for k, v in (terms or {}).items() if k in ("quantity", "seats", "units", "guests")]
        values += [p * q for p in list(values) for q in counts]
        list_price = self.view.scenario.product.list_price
        return values + ([float(list_price)] if list_price is not None else [])

    def _theirs_as_own(self, action: AnyAction, sentence: str) -> str | None:
        """A counter that names the buyer's value of an issue as its own ("Price 1070 USD." offering
        1870 where the buyer asked 1070): with no word saying whose it is, the shopper reads it as
        the seller's terms. A price is a ``price``, another issue a ``contradiction``."""
        if not isinstance(action, (MakeOffer, WalkAway)) or not self.their_values:
            return None
        own = action.terms if isinstance(action, MakeOffer) else {}
        if isinstance(action, MakeOffer) and not _WHOSE.search(sentence):
            for name, their, reason, said in self.their_values:
                if own.get(name) != their and said.search(sentence):
                    return reason
        if _THEIRS.search(sentence):
            return None
        # Named anywhere, in digits or words, as what the seller gives: "You can have it for 507.",
        # "We deliver in 3 days." (offering 28), "Payment on net60." (offering upfront), or on a
        # walk-away "It's yours for 507 if you want."
        theirs = self.view.standing_offer or {}
        stated = numbers(self._counts.sub(" ", _SPELLED_COUNT.sub(" ", sentence)))  # no count is a price
        in_digits = ""  # the sentence with its number words as digits, read once if an option needs it
        for issue in self.view.scenario.issues:
            their = theirs.get(issue.name)
            if their is None or own.get(issue.name) == their:
                continue
            if issue in self.price_issues and isinstance(their, (int, float)):
                if any(abs(x - their) <= 0.005 and x != own.get(issue.name) for x in stated):
                    return "price"
            elif issue in self.time_issues and isinstance(their, (int, float)):
                days = float(their) * _IN_DAYS[issue.unit.lower().rstrip("s")]
                if any(self._span_days(m) == days for m in _SPAN.finditer(sentence)):
                    return "contradiction"
            elif isinstance(their, str) and not stems(their.lower()) & VETTED and not self._in_listing(their):
                # "net60" as "net 60" or "net sixty" too
                option = re.sub(r"(?<=[a-z])(?=\d)", r"\\s?", re.escape(their).replace("_", "[ _]"))
                in_digits = in_digits or alpha2digit(sentence, "en")
                if re.search(rf"\b{option}\b", in_digits, re.I):
                    return "contradiction"
        return None

    def _in_listing(self, option: str) -> bool:
        """Whether the product's own text names ``option`` ("full service history" for ``full_service``)."""
        return option.replace("_", " ").lower() in " ".join(self.listing_text).lower()

    @staticmethod
    def _span_days(m: re.Match[str]) -> float:
        """The days a span of ``_SPAN`` names ("2 weeks": 14)."""
        return _span_count(m.group(1)) * _IN_DAYS[m.group(2).lower().rstrip("s")]

    def _their_values(self) -> list[tuple[str, object, str, re.Pattern[str]]]:
        """Each value of the buyer's standing offer as a message may name it after its issue
        ("price 1,070", "delivery days 3"), with the finding it makes on a counter that differs."""
        theirs = self.view.standing_offer or {}
        found: list[tuple[str, object, str, re.Pattern[str]]] = []
        for issue in self.view.scenario.issues:
            their = theirs.get(issue.name)
            if their is None:
                continue
            if isinstance(their, (int, float)) and not isinstance(their, bool):
                whole, _, part = f"{float(their):.2f}".rstrip("0").rstrip(".").partition(".")
                grouped = re.sub(r"(\d)(?=(\d{3})+$)", r"\1,?", whole)  # 1070 or 1,070
                value = rf"\$?\s?{grouped}" + (rf"\.{part}0?" if part else r"(?:\.0+)?") + r"(?!\d|\.\d)"
            else:
                value = re.escape(str(their)).replace("_", "[ _]") + r"\b"
            said = re.compile(rf"\b{self.names[issue.name]}\s*(?:of|is|at|:|=)?\s*{value}", re.I)
            found.append((issue.name, their, "price" if issue in self.price_issues else "contradiction", said))
        return found

    def _stray_time(self, sentence: str, action: AnyAction) -> bool:
        """A span of time the move, the buyer's terms and the listing do not hold ("in 125 days"
        with delivery in 14): the term's own value in any unit passes ("2 weeks" for 14 days,
        "a year" of a 12-month warranty)."""
        listed = restated(sentence, self.listing_text)
        spans = [
            float(v) * _IN_DAYS.get(i.unit.lower().rstrip("s"), 1)
            for offer in (getattr(action, "terms", None), self.view.standing_offer, self.view.own_last_offer)
            for i in self.time_issues
            if isinstance(v := (offer or {}).get(i.name), (int, float))
        ]
        # A span told of paying is a payment term: an option of the terms that counts it holds it
        # ("net30" for "Payment within 30 days."), and the delivery's 14 days only where the sentence
        # names the delivery too ("You can pay in 2 weeks." offering delivery in 14 days goes).
        if _PAYING.search(sentence):
            counted = [
                float(d)
                for offer in (getattr(action, "terms", None), self.view.standing_offer, self.view.own_last_offer)
                for v in (offer or {}).values()
                if isinstance(v, str)
                for d in re.findall(r"\d+", v)
            ]
            spans = spans + counted if self._names_time_issue(sentence) else counted
        for m in _SPAN.finditer(sentence):
            n, unit = _span_count(m.group(1)), m.group(2).lower().rstrip("s")
            days = n * _IN_DAYS[unit]
            ok = any(abs(days - a) <= 0.5 * _IN_DAYS[unit] for a in spans)
            if not ok and n not in listed:
                return True
        return False

    def _names_time_issue(self, sentence: str) -> bool:
        """Whether ``sentence`` names an issue counted in time ("delivery", "warranty")."""
        names = [w for i in self.time_issues for w in i.name.split("_") if w.rstrip("s") not in _IN_DAYS]
        return any(re.search(rf"\b{re.escape(w[:7])}", sentence, re.I) for w in names)

    def _unit_as_total(self, action: AnyAction, sentence: str, said: list[float]) -> bool:
        """A unit price given as the price of everything ("All 1000 units for 40 USD.", "The total is
        40 USD." offering 40 a unit): the buyer would read 40 for the whole order."""
        terms: Offer | None = getattr(action, "terms", None) or self.view.standing_offer
        if not terms or not _TOTAL.search(sentence) or _PER_UNIT.search(sentence):
            return False
        counts = [float(v) for k, v in terms.items() if k in ("quantity", "seats", "units", "guests")]
        units = [float(terms[i.name]) for i in self.price_issues if isinstance(terms.get(i.name), (int, float))]
        totals = [p * q for p in units for q in counts]
        if not any(q > 1 for q in counts) or any(abs(x - t) <= 0.005 * t for x in said for t in totals):
            return False
        return any(abs(x - p) <= 0.005 for x in said for p in units)

    def _stray_price(self, action: AnyAction, sentence: str, allowed: list[float]) -> bool:
        """A price-like number in ``sentence`` that is not on the table."""
        marker = _CURRENCY.get(self.currency, r"\b" + re.escape(self.currency.lower()) + r"\b")
        said = numbers(sentence) if re.search(marker, sentence, re.I) is not None else []
        if self.price_issues:  # a bare number of a price's magnitude, with no other unit after it
            low = min(i.low for i in self.price_issues) * 0.5
            high = max(i.high for i in self.price_issues) * 2
            # Beside the currency, a count is no price ("one more time, 148.5 USD"): small numbers
            # count only as an amount of money written next to the currency ("$0", "0.12 USD").
            amount = r"(?<![\d.])\d[\d,]*(?:\.\d+)?(?![\d])"
            attached = re.compile(rf"(?:{marker})\s?{amount}|{amount}\s?(?:{marker})", re.I)
            near = " ".join(m.group() for m in attached.finditer(sentence))
            small = [float(x.replace(",", "")) for x in re.findall(amount, near) if x.replace(",", "")]
            # A small amount of money must be money on the table, not a count that happens to match ("6USD" with 6 months).
            money = self._money(action)
            if any(not any(abs(x - a) <= max(0.005, 0.005 * abs(a)) for a in money) for x in small if x < low):
                return True
            said = [x for x in said if x >= low]
            for m in _BARE_NUMBER.finditer(sentence):
                x = float(m.group(0).replace(",", ""))
                if (low <= x <= high and x >= 20) or ("." in m.group(0) and x >= 1):  # "Here's your 246.4"
                    said.append(x)
            # ... and one in words ("I can do nine hundred."), unless it counts something ("twenty units")
            spelled = numbers(_SPELLED_COUNT.sub(" ", re.sub(r"\d[\d,.]*", " ", sentence)))
            said += [x for x in spelled if low <= x <= high and x >= 20]
        listed = restated(sentence, self.listing_text)  # "orders over 1000 USD", as the policy says it
        if self._unit_as_total(action, sentence, said):
            return True
        return any(not any(abs(x - a) <= max(0.5, 0.005 * abs(a)) for a in allowed) and x not in listed for x in said)


def _span_count(count: str) -> float:
    """How many units a span's count says: "2", "a", "twenty-eight"."""
    count = count.lower()
    if count in ("a", "an"):
        return 1.0
    if count[0].isdigit():
        return float(count)
    read = numbers(count)
    return read[-1] if read else -1.0  # nothing read: no term's span


def own_sentence(action: AnyAction) -> str:
    """The strategy's own sentence for a move, when none of the model's words can stay."""
    if isinstance(action, MakeOffer):
        return safe_message(action.terms)  # the sentence a fully redacted offer gets
    if isinstance(action, Accept):
        return "That works for me."
    return "I'm sorry we could not reach an agreement."


__all__ = ["Finding", "Grounding", "own_sentence"]
