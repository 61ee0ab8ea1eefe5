"""The assisted seller: the strategy's advice in the model's view, and the answer it allows.

With a strategy, the seller's model does not compute terms. On each move it reads the
strategy's advice (``negotiator.strategy.Advice``): a few offers worth the schedule's
target, each trading the other issues differently, and whether accepting the buyer's offer
is open. It answers with a choice and the words::

    {"action": "make_offer", "choice": "B", "message": "Free assembly, and we deliver in a week."}
    {"action": "accept", "message": "Deal, thank you."}

The JSON schema (and the tool schema) lists the open choices as an enum, so a
grammar-constrained model cannot name an offer that is not on the list; a free model that
does is told so and retried like any invalid answer. ``own_terms`` adds a variant with terms
of the model's own, which the guard holds to ``advice.lowest_own_terms``.
"""

from __future__ import annotations

import json
from typing import Any

from ..actions import (
    MESSAGE_MAX_CHARS,
    Accept,
    ActionParseError,
    MakeOffer,
    WalkAway,
    clean_message,
    json_objects,
    read_action_data,
    terms_schema,
)
from ..domain.issues import OutcomeSpace, terms_in_words
from ..errors import InvalidOffer
from ..party import AnyAction, PartyView
from ..strategy import Advice

_MESSAGE = {"type": "string", "maxLength": MESSAGE_MAX_CHARS}


def advice_for(view: PartyView, strategy) -> Advice:
    """The strategy's advice on ``view``'s move (deterministic: a view always gets the same)."""
    return strategy.advise(view.situation())


def answer_schema(advice: Advice, space: OutcomeSpace) -> dict[str, Any]:
    """JSON schema of one answer: the open actions, the choice an enum of the candidate ids
    (``advice.words == "strategy"``: no message; the strategy's sentence goes with the move)."""
    if advice.menu == "readings":  # the strategy's words always: the model reads, nothing else
        return _variant({"read": {"enum": [r.id for r in advice.readings]}}, ["read"])
    variants = []
    said = {"message": _MESSAGE} if advice.words == "model" else {}
    for name in advice.actions:
        props: dict[str, Any] = {"action": {"const": name}}
        required = ["action"]
        if name == "make_offer":
            if advice.choices:
                variants.append(
                    _variant({**props, "choice": {"enum": list(advice.choices)}, **said}, [*required, "choice", *said])
                )
            if advice.own_terms:
                variants.append(
                    _variant(
                        {**props, "message": _MESSAGE, "terms": terms_schema(space)}, [*required, "message", "terms"]
                    )
                )
            continue
        variants.append(_variant({**props, **said}, [*required, *said]))
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def _variant(props: dict, required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_TOOL_TEXT = {
    "make_offer": "Offer one of the options worked out for you (its id or move), with a short message.",
    "accept": "Accept the buyer's standing offer exactly as it stands.",
    "walk_away": "End the negotiation without a deal.",
}


def answer_tools(advice: Advice, space: OutcomeSpace) -> list[dict[str, Any]]:
    """OpenAI-format tool definitions for the open actions."""
    msg = {"type": "string", "description": "what you say to the buyer"}
    said = advice.words == "model"
    if advice.menu == "readings":
        read = {"read": {"type": "string", "enum": [r.id for r in advice.readings], "description": READ_TEXT}}
        params = {"type": "object", "properties": read, "required": ["read"], "additionalProperties": False}
        return [{"type": "function", "function": {"name": "read", "description": READ_TEXT, "parameters": params}}]
    tools = []
    for name in advice.actions:
        props: dict[str, Any] = {"message": msg} if said else {}
        required = ["message"] if said else []
        if name == "make_offer":
            if advice.choices:
                props["choice"] = {"type": "string", "enum": list(advice.choices), "description": "the option's id"}
                required.append("choice")
            if advice.own_terms:
                props["terms"] = terms_schema(space)
                if not advice.choices:
                    required.append("terms")
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": _TOOL_TEXT[name],
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


def parse_answer(data: dict[str, Any], advice: Advice, view: PartyView) -> AnyAction:
    """The action an answer (already read from text or a tool call) stands for; with
    ``advice.words == "strategy"`` its message is the strategy's sentence for the move.

    Raises ActionParseError with feedback for the model."""
    action = _action_of(data, advice, view)
    if advice.words == "strategy":
        opening = not any(m.party == view.role and isinstance(m.action, MakeOffer) for m in view.transcript)
        last = view.own_last_offer
        worth = (
            None
            if last is None or not isinstance(action, MakeOffer)
            else view.utility(action.terms) - view.utility(last)
        )
        sentence = move_sentence(action, advice, view.space, opening=opening, since_last=worth)
        return action.model_copy(update={"message": sentence})
    return action


def _action_of(data: dict[str, Any], advice: Advice, view: PartyView) -> AnyAction:
    if advice.menu == "readings":
        return _read_action(data, advice)
    kind = data.get("action")
    open_ = advice.actions
    if kind not in open_:
        raise ActionParseError(f"{kind!r} is not open now; the open actions are {', '.join(open_)}. {_choices(advice)}")
    message = clean_message(data.get("message"))
    if kind == "accept":
        return Accept(message=message)
    if kind == "walk_away":
        return WalkAway(message=message)
    choice, terms = data.get("choice"), data.get("terms")
    if choice is not None:
        said = str(choice).strip().lower()
        cid = next((c for c in advice.choices if c.lower() == said), None)
        if cid is None:
            raise ActionParseError(f"choice {choice!r} is not one of the options. {_choices(advice)}")
        return MakeOffer(terms=dict(advice.candidate(cid).terms), message=message)
    if terms is not None and advice.own_terms:
        try:
            return MakeOffer(terms=view.space.validate_offer(terms), message=message)
        except InvalidOffer as e:
            raise ActionParseError(
                "Invalid terms: " + "; ".join(f"{k}: {v}" for k, v in e.problems.items()) + "."
            ) from None
    raise ActionParseError(f'make_offer needs "choice": the id of one option. {_choices(advice)}')


READ_TEXT = "what the buyer's words say beyond the keyword reading: none, hurry (it must close soon) or quote"


def _read_action(data: dict[str, Any], advice: Advice) -> AnyAction:
    """The strategy's move on the reading an answer names (``menu="readings"``)."""
    said = str(data.get("read", "")).strip().lower()
    ids = [r.id for r in advice.readings]
    if said not in ids:
        raise ActionParseError(f'"read" must be one of {", ".join(ids)}, not {data.get("read")!r}.')
    move = advice.reading(said)
    if move.accept:
        return Accept(message="")
    return MakeOffer(terms=dict(move.terms), message="")


def _choices(advice: Advice) -> str:
    if not advice.choices:
        return "Accepting is what is open."
    return "Choose one of " + ", ".join(advice.choices) + "."


def read_answer(text: str, advice: Advice | None = None) -> dict[str, Any]:
    """The answer object in a model's text (code fences, prose around it); in the readings menu,
    the first object with a ``read``."""
    if advice is not None and advice.menu == "readings":
        found = next((o for o in json_objects(text or "") if isinstance(o, dict) and "read" in o), None)
        if found is None:
            raise ActionParseError('Reply with one JSON object such as {"read": "none"}.')
        return found
    return read_action_data(text)


def answer_json(action: AnyAction, advice: Advice) -> str:
    """The answer a model in this mode writes for ``action`` (the rendered history of a past move)."""
    data: dict[str, Any] = {"action": action.action}
    if isinstance(action, MakeOffer):
        cid = advice.choice_of(action.terms)
        if cid is not None:
            data["choice"] = cid
            if advice.words == "model":
                data["message"] = action.message
        else:  # not one of the options (own terms, a repair): the terms themselves
            data["message"] = action.message
            data["terms"] = action.terms
    elif advice.words == "model":
        data["message"] = action.message
    return json.dumps(data, ensure_ascii=False)


_SENTENCES = {
    "hold": "I'll stay at {terms}.",
    "step": "I can move to {terms}.",
    "big_step": "I can come a long way: {terms}.",
    "final": "My final offer: {terms}.",
}


def move_sentence(
    action: AnyAction, advice: Advice, space: OutcomeSpace, *, opening: bool = False, since_last: float | None = None
) -> str:
    """The strategy's own sentence for a move (``words="strategy"``): the terms and nothing else,
    so a decision-only seller says nothing its listing and its move do not hold. ``opening``: the
    seller has offered nothing yet, so it cannot "stay at" or "move to" anything. ``since_last``:
    what the move is worth to the seller less its last offer; a move that gives the buyer nothing
    does not "move" or "come a long way", and one that changes the terms does not "stay"."""
    if isinstance(action, Accept):
        return "Deal, thank you."
    if isinstance(action, WalkAway):
        return "I'm sorry we could not agree. Goodbye."
    cid = advice.choice_of(action.terms)
    if opening and cid != "final":
        return f"I can offer {terms_in_words(space, action.terms)}."
    if since_last is not None and (
        (cid in ("step", "big_step") and since_last >= -1e-9) or (cid == "hold" and abs(since_last) > 1e-9)
    ):
        cid = None  # the words would say the move goes where it does not
    template = _SENTENCES.get(cid or "", "Here is my offer: {terms}.")
    return template.format(terms=terms_in_words(space, action.terms))
