"""The structured actions a party can take, and how to read them from a model.

One pydantic schema per action: ``make_offer(terms, message)``, ``accept(message)``,
``walk_away(message)``. The same schema is exported three ways:

* as OpenAI-format tool definitions (native tool-call mode: frontier models, Gemma 4 ...),
* as a JSON schema for one action object (JSON-in-text mode, and ``response_format`` /
  grammar-constrained decoding on vLLM and the embedded local server),
* as prose in the prompt.

Parsing is tolerant of how models wrap JSON (code fences, prose around it, a tool-call
envelope) and strict about the terms: every issue, allowed values only, right types.
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .domain.issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace, Value
from .domain.protocol import ProtocolState
from .domain.scenario import Listing, Role
from .errors import ActionParseError, InvalidOffer, ProtocolError, UsageError

MESSAGE_MAX_CHARS = 240  # a chat line; under constrained decoding a short cap keeps generation fast
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # dropped from messages (tabs and newlines stay)


class _Action(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    message: str = Field(default="", max_length=4000, description="what you say to the other side")


class MakeOffer(_Action):
    """Propose complete terms: a value for every issue."""

    action: Literal["make_offer"] = "make_offer"
    terms: dict[str, Value]


class Accept(_Action):
    """Accept the other side's standing offer exactly as it stands."""

    action: Literal["accept"] = "accept"

    @property
    def terms(self) -> None:  # uniform access: every action has .terms
        return None


class WalkAway(_Action):
    """End the negotiation without a deal."""

    action: Literal["walk_away"] = "walk_away"

    @property
    def terms(self) -> None:
        return None


Action = Annotated[MakeOffer | Accept | WalkAway, Field(discriminator="action")]
ACTIONS: dict[str, type[_Action]] = {"make_offer": MakeOffer, "accept": Accept, "walk_away": WalkAway}
_action_adapter: TypeAdapter[Action] = TypeAdapter(Action)


def action_from_dict(data: dict[str, Any]) -> MakeOffer | Accept | WalkAway:
    return _action_adapter.validate_python(data)


# --- schemas -------------------------------------------------------------------------


def terms_schema(space: OutcomeSpace | None) -> dict[str, Any]:
    """JSON schema of the terms object; exact (enums, bounds) when the space is known."""
    if space is None:
        return {"type": "object", "additionalProperties": {"type": ["number", "string"]}}
    props: dict[str, Any] = {}
    for issue in space.issues:
        if isinstance(issue, DiscreteIssue):
            props[issue.name] = {"enum": list(issue.options)}
        else:
            assert isinstance(issue, NumericIssue)
            t = "integer" if issue.integral else "number"  # values are snapped to the step afterwards
            props[issue.name] = {"type": t, "minimum": _num(issue.low), "maximum": _num(issue.high)}
            if issue.unit:
                props[issue.name]["description"] = issue.unit
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


_DESCRIPTIONS = {
    "make_offer": "Propose complete terms: one allowed value for every issue, plus a short message.",
    "accept": "Accept the other side's standing offer exactly as it stands.",
    "walk_away": "End the negotiation without a deal.",
}


def _actions(allowed: Iterable[str]) -> tuple[str, ...]:
    """``allowed`` as action names, or a UsageError naming what is not one."""
    if isinstance(allowed, (str, bytes)) or not isinstance(allowed, Iterable):
        raise UsageError(f"allowed must be a tuple of action names ({', '.join(ACTIONS)}), not {allowed!r}")
    names = tuple(allowed)
    unknown = [a for a in names if a not in ACTIONS]
    if unknown or not names:
        said = f"{unknown[0]!r} is not an action" if unknown else "it names no action"
        raise UsageError(f"allowed: {said}; give one or more of {', '.join(ACTIONS)}")
    return names


def tool_definitions(
    space: OutcomeSpace | None = None, allowed: tuple[str, ...] = tuple(ACTIONS)
) -> list[dict[str, Any]]:
    """OpenAI-format tool definitions (what LiteLLM forwards to any provider)."""
    msg = {"type": "string", "description": "what you say to the other side"}
    tools = []
    for name in _actions(allowed):
        props: dict[str, Any] = {"message": msg}
        required = ["message"]
        if name == "make_offer":
            props = {"terms": terms_schema(space), "message": msg}
            required = ["terms", "message"]
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": _DESCRIPTIONS[name],
                    "parameters": {
                        "type": "object",
                        "properties": props,
                        "required": required,
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tools


def action_json_schema(space: OutcomeSpace | None = None, allowed: tuple[str, ...] = tuple(ACTIONS)) -> dict[str, Any]:
    """JSON schema of one action object, for JSON-in-text mode and constrained decoding.

    ``message`` comes before ``terms`` so a constrained decoder writes the words first and
    the numbers last (the numbers can then follow the words).
    """
    msg = {"type": "string", "maxLength": MESSAGE_MAX_CHARS}
    variants = []
    for name in _actions(allowed):
        props: dict[str, Any] = {"action": {"const": name}, "message": msg}
        required = ["action", "message"]
        if name == "make_offer":
            props["terms"] = terms_schema(space)
            required.append("terms")
        variants.append({"type": "object", "properties": props, "required": required, "additionalProperties": False})
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


# --- parsing ------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def json_objects(text: str):
    """Yield each top-level JSON object found in ``text``, in order."""
    decoder = json.JSONDecoder(strict=False)  # tolerate raw control characters inside strings
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in candidates:
        i = chunk.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(chunk, i)
            except json.JSONDecodeError:
                i = chunk.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                yield obj
            i = chunk.find("{", end)


def _normalise(obj: dict[str, Any]) -> dict[str, Any] | None:
    """Map the shapes models write onto {"action": name, ...}; None if not an action."""
    if isinstance(obj.get("action"), str):
        return obj
    # {"name": "make_offer", "arguments": {...}} and similar tool-call envelopes
    name = obj.get("name") or obj.get("tool") or obj.get("function")
    if isinstance(name, str) and name in ACTIONS:
        args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                return None
        if isinstance(args, dict):
            return {"action": name, **args}
    # {"make_offer": {...}}
    if len(obj) == 1:
        ((k, v),) = obj.items()
        if k in ACTIONS and isinstance(v, dict):
            return {"action": k, **v}
    return None


def read_action_data(text: str) -> dict[str, Any]:
    """The first action object in free text, as a dict with an ``action`` key. Raises ActionParseError."""
    if not text or not text.strip():
        raise ActionParseError("Your reply was empty. Reply with one JSON action object.")
    found_any = False
    for obj in json_objects(text):
        found_any = True
        data = _normalise(obj)
        if data is not None:
            return data
    if not found_any:
        raise ActionParseError(
            "No JSON object found. Reply with exactly one JSON object such as "
            '{"action": "make_offer", "message": "...", "terms": {...}}.'
        )
    raise ActionParseError(
        'Invalid action: the JSON object has no "action" field; use "make_offer", "accept" or "walk_away".'
    )


def parse_text_action(text: str, space: OutcomeSpace | None = None) -> MakeOffer | Accept | WalkAway:
    """Read one action from free text (JSON-in-text mode). Raises ActionParseError."""
    return _build(read_action_data(text), space)


def parse_tool_call(
    name: str, arguments: str | dict[str, Any], space: OutcomeSpace | None = None
) -> MakeOffer | Accept | WalkAway:
    """Read one action from a native tool call. Raises ActionParseError."""
    if name not in ACTIONS:
        raise ActionParseError(f"Unknown tool {name!r}; call make_offer, accept or walk_away.")
    return _build(tool_answer(name, arguments), space)


def tool_answer(name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as an answer object (``action`` = the tool). Raises ActionParseError."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as e:
            raise ActionParseError(f"The arguments of {name} are not valid JSON ({e.msg}).") from None
    if not isinstance(arguments, dict):
        raise ActionParseError(f"The arguments of {name} must be a JSON object.")
    return {**arguments, "action": name}


def _build(data: dict[str, Any], space: OutcomeSpace | None) -> MakeOffer | Accept | WalkAway:
    kind = data.get("action")
    if kind not in ACTIONS:
        raise ActionParseError(f'Unknown action {kind!r}; use "make_offer", "accept" or "walk_away".')
    cls = ACTIONS[kind]
    fields = set(cls.model_fields)
    data = {k: v for k, v in data.items() if k in fields}  # tolerate extra chatter keys
    data["message"] = clean_message(data.get("message"))
    if kind == "make_offer":
        terms = data.get("terms")
        if space is not None:
            try:
                data["terms"] = space.validate_offer(terms)
            except InvalidOffer as e:
                raise ActionParseError(
                    "Invalid terms: " + "; ".join(f"{k}: {v}" for k, v in e.problems.items()) + "."
                ) from None
        elif not isinstance(terms, dict):
            raise ActionParseError('make_offer needs "terms": an object with a value for every issue.')
    try:
        return action_from_dict(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ActionParseError(f"Invalid {kind}: {where}: {first['msg']}.") from None


def clean_message(message: object) -> str:
    """A model's message as plain text: control characters dropped, never None."""
    if message is None:
        return ""
    return _CONTROL.sub(" ", message if isinstance(message, str) else str(message)).strip()


def action_to_json(action: MakeOffer | Accept | WalkAway) -> str:
    """The canonical JSON-text form of an action (what a JSON-mode model should write)."""
    data: dict[str, Any] = {"action": action.action, "message": action.message}
    if isinstance(action, MakeOffer):
        data["terms"] = action.terms
    return json.dumps(data, ensure_ascii=False)


# --- the turn step: every move of every party passes here before the protocol applies it -----
#
# Used by the runtime's negotiation loop, by Sessions (buyer moves, seller replies, the replay
# of a stored transcript) and by SellerAgent.respond (the transcript an app hands it), so the
# protocol only ever holds plain, valid terms: the protocol allows the move (ProtocolError
# otherwise); an offer fits the outcome space (InvalidOffer naming each issue); numbers are plain
# Python numbers (a numpy.int64 from a party's own code becomes an int), discrete values take the
# option's declared type (3.0 becomes 3) and numeric values are snapped onto the issue's grid
# (1988.63 on a step-1 price is 1989).

AnyAction = MakeOffer | Accept | WalkAway


def plain(value: object) -> object:
    """``value`` as a plain Python number when it is any kind of number (numpy's included)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def normalise_terms(space: OutcomeSpace, terms: object) -> Offer:
    """Canonical terms (issue order, plain numbers, on the grid, declared option types); InvalidOffer when they do not fit."""
    if isinstance(terms, dict):
        terms = {k: plain(v) for k, v in terms.items()}
    return space.validate_offer(terms)


def checked(state: ProtocolState, space: OutcomeSpace, role: Role, action: AnyAction) -> AnyAction:
    """``action`` as the protocol will apply it, or ProtocolError / InvalidOffer saying why it cannot."""
    problem = state.check(role, action.action)
    if problem is not None:
        raise ProtocolError(problem)
    if isinstance(action, MakeOffer):
        terms = normalise_terms(space, action.terms)
        if terms != action.terms or any(type(terms[k]) is not type(action.terms[k]) for k in terms):
            action = action.model_copy(update={"terms": terms})
    return action


def play(state: ProtocolState, space: OutcomeSpace, role: Role, action: AnyAction) -> AnyAction:
    """Check and normalise ``action``, apply it to ``state``, and return it as applied."""
    action = checked(state, space, role, action)
    state.apply(role, action.action, action.terms)
    return action


def replay(listing: Listing, moves: Iterable[tuple[Role, AnyAction]]) -> ProtocolState:
    """The protocol state after ``moves`` ((role, action) pairs); raises at the first one that does not fit."""
    state = ProtocolState(opener=listing.opener, max_turns=listing.max_turns)
    for role, action in moves:
        play(state, listing.space, role, action)
    return state
