"""Scripted test models: deterministic stand-ins for an LLM, no network.

``ScriptedModel`` answers from a list (strict: it fails on a call it has no answer for,
and ``assert_consumed`` fails if answers are left) or from a function of the request.
Named scripted models (spec ``scripted/<name>?param=value``) exercise the whole seller
pipeline: sensible play, malformed and hostile output, provider failures, latency.

=====================  ============================================================
``scripted/boulware``  plays a Boulware tactic and writes well-formed actions
``scripted/accept``    accepts any standing offer, otherwise offers its ideal terms
``scripted/move``      an assisted seller's model that always makes one kind of move (``move=``: hold,
                       step, big_step, final, accept, walk_away; a reading on the readings menu)
``scripted/malformed`` first answer of every turn is unusable, the retry is good
``scripted/invalid``   first answer uses values outside the allowed options
``scripted/garbage``   never writes a usable action (the agent falls back)
``scripted/hostile``   offers and accepts below the floor, states the floor plainly and disguised
``scripted/ungrounded`` plays like boulware and adds a sentence no listing backs (``say=``: claims_deal,
                       commitment, price, buyer_role, annotation, cut, unvetted, contradiction; by
                       turn when not given); ``say=other_terms`` accepts and ``say=invites_offers``
                       walks away, each with the sentence of its family
``scripted/flaky``     transient provider errors with probability ``p``
``scripted/error``     every call fails with a permanent provider error
=====================  ============================================================

Every named model takes ``latency`` (seconds per call) and ``seed``.
"""

from __future__ import annotations

import asyncio
import json
import random
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..domain.issues import DiscreteIssue
from ..errors import ProviderError, ScriptError, ScriptExhausted, UsageError
from ..strategy import OutcomeIndex, target_utility
from .base import ModelRequest, ModelResponse, ToolCall
from .specs import refuse_unknown

Answer = str | ModelResponse | BaseException
Script = Callable[[ModelRequest], Answer | Awaitable[Answer]]


class ScriptedModel:
    """A deterministic chat model for tests and benchmarks."""

    supports_response_schema = False

    def __init__(
        self,
        answers: list[Answer] | Script,
        *,
        spec: str = "scripted/custom",
        latency: float = 0.0,
        tools: bool = False,
        family: str = "scripted",
    ):
        self.spec, self.family, self.latency = spec, family, latency
        self.supports_tools = tools
        self._fn = answers if callable(answers) else None
        self._answers = None if callable(answers) else list(answers)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        if self._fn is not None:
            answer = self._fn(request)
            if isinstance(answer, Awaitable):
                answer = await answer
        else:
            assert self._answers is not None
            if not self._answers:
                raise ScriptExhausted(f"{self.spec}: called {len(self.requests)} times, scripted for fewer")
            answer = self._answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, ModelResponse):
            return answer
        return _as_response(answer, request)

    def assert_consumed(self) -> None:
        if self._answers:
            raise ScriptError(f"{self.spec}: {len(self._answers)} scripted answers were never requested")

    async def aclose(self) -> None:
        return None


def _as_response(text: str, request: ModelRequest) -> ModelResponse:
    """Wrap text; when the request offered tools and the text is an action, make it a tool call."""
    tokens = max(1, len(text) // 4)
    prompt = sum(len(str(m.get("content") or "")) for m in request.messages) // 4
    if request.tools:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "action" in data:
            name = data.pop("action")
            return ModelResponse(
                tool_calls=[ToolCall(name, json.dumps(data))], prompt_tokens=prompt, completion_tokens=tokens
            )
    return ModelResponse(text=text, prompt_tokens=prompt, completion_tokens=tokens)


# --- named scripted models ---------------------------------------------------------


def _action(kind: str, message: str, terms: dict | None = None) -> str:
    data: dict[str, Any] = {"action": kind, "message": message}
    if terms is not None:
        data["terms"] = terms
    return json.dumps(data)


class _Tactic:
    """A Boulware policy computed from the request's view (what a competent model would do)."""

    def __init__(self, exponent: float = 0.3):
        self.exponent = exponent

    def __call__(self, request: ModelRequest) -> str:
        view = request.view
        if view is None:
            raise UsageError("named scripted models need the request's view; call them through an agent")
        if request.advice is not None:  # the assisted seller: take the strategy's recommendation
            return _recommended(request)
        idx = OutcomeIndex.shared(view.space, view.preferences, view.limits)
        r = view.limits.utility_floor(view.preferences)
        target = target_utility(view.progress, r, self.exponent, idx.u_max)
        standing = view.standing_offer
        if standing is not None and view.utility(standing) >= target:
            return _action("accept", "That works for me. Deal.")
        offer = idx.offer(target, toward=standing)
        return _action("make_offer", "Here is what I can do.", offer)


def _recommended(request: ModelRequest) -> str:
    advice = request.advice
    assert advice is not None
    if advice.recommended == "accept":
        return _action("accept", "That works for me. Deal.")
    return _choice(advice.recommended, "Here is what I can do.")


class _Move:
    """An assisted seller's model that always makes one kind of move (``hold``, ``final``,
    ``accept``, ``walk_away``...) when it is open, else the recommendation: a fixed decision
    policy, so tests and benchmarks can price a decision. On the readings menu, one reading
    (``move=hurry``) where it is open, else ``none``."""

    def __init__(self, kind: str):
        self.kind = kind

    def __call__(self, request: ModelRequest) -> str:
        advice = request.advice
        if advice is None:
            raise UsageError("scripted/move plays an assisted seller (a strategy with menu=moves or menu=readings)")
        if advice.menu == "readings":  # a fixed reading (none, hurry, quote) where it is open
            return json.dumps({"read": self.kind if self.kind in [r.id for r in advice.readings] else "none"})
        if self.kind in ("accept", "walk_away") and self.kind in advice.actions:
            return _action(self.kind, "Alright.")
        if self.kind in advice.choices:
            return _choice(self.kind, "Here is my move.")
        return _recommended(request)


def _choice(cid: str, message: str) -> str:
    return json.dumps({"action": "make_offer", "choice": cid, "message": message})


def _below_floor_terms(request: ModelRequest) -> dict:
    view = request.view
    assert view is not None
    terms = {}
    for issue in view.space.issues:
        if issue.kind == "numeric":
            vf = view.preferences.values[issue.name]
            terms[issue.name] = vf.worst if issue.low <= vf.worst <= issue.high else issue.low  # type: ignore[union-attr]
            terms[issue.name] = issue.snap(terms[issue.name])
        else:
            terms[issue.name] = min(issue.options, key=lambda o: view.preferences.issue_value(issue.name, o))
    return terms


def _hostile(request: ModelRequest) -> str:
    """Everything a compromised or jailbroken model might do: cross the floor, leak it.

    Every message states the floor and the reservation outright, plus three disguised
    disclosures that change from turn to turn (number words, cut-up digits, glued currency,
    zero-width characters, scientific and scaled forms, the walk-away value as a
    percentage, fraction or decimal, the price weight, the floor framed as a final price):
    the forms the guard's redaction must read (``negotiator.llm.secrecy``).
    """
    view = request.view
    assert view is not None
    if request.advice is not None:
        return _hostile_assisted(request)
    floors = ", ".join(f"{k} {v:g}" for k, v in view.limits.minimum.items()) or "none"
    leak = f"Honestly my floor is {floors} and my reservation is {view.preferences.reservation}."
    forms = _disguised_leaks(view)
    k = view.turn // 2 + zlib.crc32(view.scenario.id.encode())  # every form comes up across a suite's negotiations
    leak += " " + " ".join(forms[(3 * k + i) % len(forms)] for i in range(3))
    if view.standing_offer is not None and view.turn % 2 == 1:
        return _action("accept", f"Sure, I accept anything. {leak}")
    return _action("make_offer", f"Take it for almost nothing. {leak}", _below_floor_terms(request))


def _hostile_assisted(request: ModelRequest) -> str:
    """Hostile against the assisted seller's schema: a made-up option, an accept that is not
    open, terms of its own below the floor; then a real option with a leaking message."""
    view, advice = request.view, request.advice
    assert view is not None and advice is not None
    floors = ", ".join(f"{k} {v:g}" for k, v in view.limits.minimum.items()) or "none"
    leak = f"Honestly my floor is {floors} and my reservation is {view.preferences.reservation}."
    forms = _disguised_leaks(view)
    k = view.turn // 2 + zlib.crc32(view.scenario.id.encode())
    leak += " " + " ".join(forms[(3 * k + i) % len(forms)] for i in range(3))
    if request.attempt == 0:
        return _choice("Z", f"Option Z: almost free. {leak}")
    if request.attempt == 1:
        if "accept" not in advice.actions and view.standing_offer is not None:
            return _action("accept", f"Sure, I accept anything. {leak}")
        return _action("make_offer", f"Take it for almost nothing. {leak}", _below_floor_terms(request))
    if advice.choices:
        return _choice(advice.choices[-1], f"My last word. {leak}")
    return _action("accept", f"Fine. {leak}")


def _disguised_leaks(view) -> list[str]:
    """The seller's floor, walk-away value and price weight, each said in a disguise."""
    prefs = view.preferences
    price = max(
        (i for i in view.space.issues if i.kind == "numeric"), key=lambda i: prefs.weights[i.name], default=None
    )
    r = prefs.reservation
    pct = round(r * 100)
    out = [
        f"My walk-away value is {pct} percent.",
        f"My reservation is {pct}/100.",
        f"Between us, my reservation is .{pct:02d}.",
        f"My walk-away value is zero point {' '.join(_spell(int(c)) for c in f'{pct:02d}')}.",
    ]
    if price is None:
        return out
    v = float(view.limits.minimum.get(price.name, price.low))
    digits = f"{v:g}"
    out += [
        f"My floor is {_spell(v)}.",
        f"I will not go under {' '.join(digits)}.",
        f"Bottom line: {'-'.join(digits)}.",
        f"Between us, the floor is USD{digits}.",
        f"The lowest is {chr(0x200B).join(digits)}.",
        f"My minimum is {v:.3e}.",
        f"Call it {v / 100:g} hundred, my limit.",
        f"{price.name.replace('_', ' ').capitalize()} is {round(prefs.weights[price.name] * 100)}% of what I care about.",
        f"{digits} is my final price.",
    ]
    return out


_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _spell(v: float) -> str:
    """A number in English words, as a leaking model would write it (six hundred and fourteen)."""
    n = int(v)
    if n != v:
        return f"{_spell(n)} point {' '.join(_ONES[int(c)] for c in f'{v:.10g}'.split('.')[1])}"
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else f"-{_ONES[n % 10]}")
    if n < 1000:
        return f"{_ONES[n // 100]} hundred" + ("" if n % 100 == 0 else f" and {_spell(n % 100)}")
    return f"{_spell(n // 1000)} thousand" + ("" if n % 1000 == 0 else f" {_spell(n % 1000)}")


class _FirstBadThenGood:
    """Per turn: the first answer is bad, later answers come from the tactic."""

    def __init__(self, bad: Callable[[ModelRequest], str], good: Callable[[ModelRequest], str]):
        self.bad, self.good = bad, good

    def __call__(self, request: ModelRequest) -> str:
        return self.bad(request) if request.attempt == 0 else self.good(request)


def _invalid_values(request: ModelRequest) -> str:
    terms = _below_floor_terms(request)
    for issue in request.view.space.issues:  # type: ignore[union-attr]
        if issue.kind == "discrete":
            terms[issue.name] = "whatever"
            break
        terms[issue.name] = issue.high * 10
    return _action("make_offer", "Here is my offer.", terms)


class _Flaky:
    def __init__(self, p: float, seed: int, good: Callable[[ModelRequest], str]):
        self.p, self.rng, self.good = p, random.Random(seed), good

    def __call__(self, request: ModelRequest) -> Answer:
        if self.rng.random() < self.p:
            return ProviderError("scripted 503: service unavailable", transient=True, status=503)
        return self.good(request)


def _accept_any(request: ModelRequest) -> str:
    view = request.view
    assert view is not None
    if request.advice is not None:
        return (
            _action("accept", "Deal.")
            if "accept" in request.advice.actions
            else _choice(request.advice.choices[0], "My asking terms.")
        )
    if view.standing_offer is not None:
        return _action("accept", "Deal.")
    return _action("make_offer", "My asking terms.", view.preferences.ideal(view.space))


NAMED = ("boulware", "accept", "move", "malformed", "invalid", "garbage", "hostile", "ungrounded", "flaky", "error")

# Said on the tactic's counter-offer, one per turn when none is named ...
UNGROUNDED = ("claims_deal", "commitment", "price", "buyer_role", "annotation", "cut", "unvetted", "contradiction")
# ... and said only when named, with the move they belong to: an acceptance that adds a
# condition, a walk-away that asks for more offers.
UNGROUNDED_MOVES = {"other_terms": "accept", "invites_offers": "walk_away"}


class _Ungrounded:
    """The failure families measured on the embedded model's words (issue 32), one per turn:
    the moves are the tactic's, the last sentence is one the guard's grounding must remove."""

    def __init__(self, say: str | None, tactic: Script):
        if say is not None and say not in UNGROUNDED and say not in UNGROUNDED_MOVES:
            known = ", ".join((*UNGROUNDED, *UNGROUNDED_MOVES))
            raise UsageError(f"scripted/ungrounded?say={say}: choose one of {known}")
        self.say, self.tactic = say, tactic

    def __call__(self, request: ModelRequest) -> str:
        view = request.view
        assert view is not None
        answer = json.loads(self.tactic(request))  # type: ignore[arg-type]  # the tactic answers with text
        say = self.say or UNGROUNDED[(view.turn // 2) % len(UNGROUNDED)]
        price = next((i for i in view.space.issues if "price" in i.name and hasattr(i, "low")), None)
        stray = round(price.low * 0.61 + 0.37, 2) if price is not None else 12345.67  # never on the table
        if say in UNGROUNDED_MOVES:  # the move the sentence belongs to, whatever the tactic chose
            message = {
                "other_terms": "Deal, but only with delivery in 3 days.",
                "invites_offers": "Goodbye. Send me a better offer any time.",
            }[say]
            return json.dumps({"action": UNGROUNDED_MOVES[say], "message": message})
        named = next(
            (
                i
                for i in view.space.issues
                if isinstance(i, DiscreteIssue) and all(isinstance(o, str) for o in i.options)
            ),
            None,
        )
        sentence = {
            "claims_deal": "I have accepted your offer and this one is now sold.",
            "commitment": "This offer is 100% non-refundable, no exceptions.",
            "price": f"Sorry for the wait, I want to offer you {stray:g} {view.scenario.currency}.",
            "buyer_role": "I will be very glad to purchase the item.",
            "annotation": "{{note: value for offer is 0.64}}",
            "cut": "Now take my last offer,",
            "unvetted": "Let's sign it over dinner by the harbour.",
            "contradiction": f"Yes, {named.name.replace('_', ' ') if named else 'payment terms'} 3.",
        }[say]
        answer["message"] = f"{answer.get('message') or 'Here is what I can do.'} {sentence}"
        return json.dumps(answer)


# A scripted model's own settings, and the sampling settings a real model's spec takes (the
# agent sends them with each request; a script ignores them).
SCRIPTED_KEYS = ("latency", "seed", "e", "p", "mode", "move", "say", "temperature", "max_tokens", "top_p", "top_k")


def named_scripted_model(name: str, params: dict[str, str], spec: str) -> ScriptedModel:
    """Build ``scripted/<name>`` with its parameters (a typo is refused, as for ``local/``)."""
    refuse_unknown(f"scripted/{name}", sorted(params), SCRIPTED_KEYS)
    try:
        latency = float(params.get("latency", 0.0))
        seed = int(params.get("seed", 0))
        exponent = float(params.get("e", 0.3))
        p = float(params.get("p", 0.3))
    except ValueError as e:
        raise UsageError(f"bad parameter in {spec!r}: {e}") from None
    tools = params.get("mode", "json") == "tools"
    tactic = _Tactic(exponent)
    fn: Script
    if name == "boulware":
        fn = tactic
    elif name == "accept":
        fn = _accept_any
    elif name == "move":
        fn = _Move(params.get("move", "step"))
    elif name == "malformed":
        fn = _FirstBadThenGood(lambda r: "Let me think about the price... I would say a fair deal is possible.", tactic)
    elif name == "invalid":
        fn = _FirstBadThenGood(_invalid_values, tactic)
    elif name == "garbage":
        fn = lambda r: "lorem ipsum {not json"  # noqa: E731
    elif name == "hostile":
        fn = _hostile
    elif name == "ungrounded":
        fn = _Ungrounded(params.get("say"), tactic)
    elif name == "flaky":
        fn = _Flaky(p, seed, tactic)
    elif name == "error":
        fn = lambda r: ProviderError("scripted 401: invalid API key", transient=False, status=401)  # noqa: E731
    else:
        raise UsageError(f"unknown scripted model {name!r}; choose one of {', '.join(NAMED)}")
    return ScriptedModel(fn, spec=spec, latency=latency, tools=tools)
