"""Rendering a party's view into chat messages, and the format the model answers in.

This module is the single source of the prompt: the deployed agent, the LLM buyers and
the GRPO rollout all call ``render_messages``, so what is trained is exactly what is
deployed. The chat grows append-only from turn to turn (the rules and a worked example,
then one user message per move of the other side and one assistant message per own
move), which keeps prefix caches warm and lets training treat a whole negotiation as one
sequence. Roles alternate strictly (system, user, assistant, user, ...), as Gemma's chat
template requires; the system message is folded into the first user turn there.

Only the view is rendered: the other side's preferences are not in it, so they cannot
leak into the prompt.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from ..actions import Accept, MakeOffer, action_to_json
from ..domain.issues import DiscreteIssue, NumericIssue, Offer, _fmt
from ..domain.scenario import other
from ..party import PartyView, PublicMove

PROMPT_VERSION = "2"
Mode = Literal["json", "tools"]

RETRY_TEMPLATE = "Your reply could not be used: {feedback} Reply again with one valid action."

# Version 2 is compact for small models (the embedded Gemma 3 270M reads every token on a CPU):
# one line per issue with the options best-first, the worth of every offer to you, a worked
# example exchange in this very outcome space, and short turn messages.


def _issue_line(view: PartyView, issue: NumericIssue | DiscreteIssue) -> str:
    unit = f" {issue.unit}" if issue.unit else ""
    if isinstance(issue, NumericIssue):
        vf = view.preferences.values[issue.name]
        better = "higher" if vf.best > vf.worst else "lower"  # type: ignore[union-attr]
        return f"- {issue.name}: {_fmt(issue.low)} to {_fmt(issue.high)}{unit}, {better} is better for you"
    ranked = sorted(issue.options, key=lambda o: -view.preferences.issue_value(issue.name, o))
    return f"- {issue.name}: one of {', '.join(json.dumps(o) for o in ranked)}{unit} (best for you first)"


def rules_text(view: PartyView, instructions: str = "", mode: Mode = "json") -> str:
    """The standing instructions: role, product, issues, own priorities, limits, format."""
    sc, me, them = view.scenario, view.role, other(view.role)
    deal = "selling" if me == "seller" else "buying"
    product = sc.product.name + (f" ({sc.product.description.rstrip('.')})" if sc.product.description else "")
    lines = [f"You are the {me}, {deal}: {product}."]
    if instructions.strip():
        lines.append(instructions.strip())
    lines.append("Issues; every offer gives one allowed value for each:")
    lines += [_issue_line(view, issue) for issue in sc.issues]
    weights = sorted(view.preferences.weights.items(), key=lambda kv: -kv[1])
    lines.append("What matters to you: " + ", ".join(f"{k} {round(100 * w)}%" for k, w in weights) + ".")
    floor = view.limits.utility_floor(view.preferences)
    lines.append(
        f"Each offer is shown with its worth to you, from 0 to 1. Your walk-away value is {floor:.2f}: "
        "never agree to less. Keep it and your limits secret."
    )
    hard = _limits_text(view)
    if hard:
        lines.append("Hard limits: " + hard + ".")
    lines.append(
        f"{view.max_turns // 2} rounds; you and the {them} take turns. On your turn: make_offer, accept the "
        f"{them}'s latest offer, or walk_away. No deal after the last round means no deal."
    )
    if mode == "json":
        lines.append(
            'Reply with one JSON object only: {"action": "make_offer", "message": "...", "terms": {...}}, '
            '{"action": "accept", "message": "..."} or {"action": "walk_away", "message": "..."}.'
        )
    else:
        lines.append("Act by calling exactly one tool: make_offer, accept or walk_away.")
    return "\n".join(lines)


def _limits_text(view: PartyView) -> str:
    parts = [f"{k} at least {_fmt(v)}" for k, v in view.limits.minimum.items()]
    parts += [f"{k} at most {_fmt(v)}" for k, v in view.limits.maximum.items()]
    parts += [f"{k} never {', '.join(str(o) for o in opts)}" for k, opts in view.limits.forbidden.items()]
    return "; ".join(parts)


def _terms(view: PartyView, terms: Offer) -> str:
    return json.dumps(terms, ensure_ascii=False)


def _move_text(view: PartyView, move: PublicMove) -> str:
    who = "You" if move.party == view.role else f"The {move.party}"
    a = move.action
    said = f' and said: "{a.message}"' if a.message else ""
    if isinstance(a, MakeOffer):
        worth = view.utility(a.terms)
        return f"{who} offered {_terms(view, a.terms)} (worth {worth:.2f} to you){said}."
    if isinstance(a, Accept):
        return f"{who} accepted{said}."
    return f"{who} walked away{said}."


def _turn_prompt(view: PartyView, since: list[PublicMove], turn: int) -> str:
    """The user message before the move at index ``turn``: what the other side did since."""
    lines = [_move_text(view, m) for m in since]
    if turn == 0:
        lines.append(f"You open; the {other(view.role)} has made no offer yet.")
    rounds = view.max_turns // 2
    left = (view.max_turns - turn + 1) // 2
    last = " This is your last turn." if left == 1 else ""
    lines.append(f"Round {turn // 2 + 1} of {rounds}; your move.{last}")
    if not any(m.party != view.role and isinstance(m.action, MakeOffer) for m in view.transcript[:turn]):
        lines.append("There is no offer to accept yet.")
    return "\n".join(lines)


_EXAMPLE_USER = "Example: round 1 of {rounds}; your move."
_REAL_START = "End of example. The real negotiation starts now."


def _example(view: PartyView) -> tuple[str, str]:
    """A worked first move on this very outcome space: the shape to copy."""
    ideal = view.preferences.ideal(view.space)
    ans = action_to_json(MakeOffer(terms=ideal, message="Thanks for your interest. Here is my proposal."))
    return _EXAMPLE_USER.format(rounds=view.max_turns // 2), ans


def render_messages(view: PartyView, instructions: str = "", mode: Mode = "json") -> list[dict]:
    """The chat for the model that acts in ``view``; append-only across the negotiation."""
    ex_user, ex_answer = _example(view)
    messages: list[dict] = [
        {"role": "system", "content": rules_text(view, instructions, mode)},
        {"role": "user", "content": ex_user},
        {"role": "assistant", "content": ex_answer},
    ]
    first = True  # the first real turn message closes the example
    since: list[PublicMove] = []

    def user(turn: int) -> dict:
        nonlocal first
        text = _turn_prompt(view, since, turn)
        if first:
            text, first = f"{_REAL_START}\n{text}", False
        return {"role": "user", "content": text}

    for i, move in enumerate(view.transcript):
        if move.party == view.role:
            messages.append(user(i))
            messages.append({"role": "assistant", "content": action_to_json(move.action)})
            since = []
        else:
            since.append(move)
    messages.append(user(view.turn))
    return messages


def retry_message(raw: str, feedback: str) -> list[dict]:
    """What is appended after an unusable answer: the answer, then the feedback."""
    return [
        {"role": "assistant", "content": raw or "(empty)"},
        {"role": "user", "content": RETRY_TEMPLATE.format(feedback=feedback)},
    ]


def prompt_hash(instructions: str, mode: Mode) -> str:
    """Identifies the prompt format + instructions in episode provenance."""
    return hashlib.sha256(f"{PROMPT_VERSION}|{mode}|{instructions}".encode()).hexdigest()[:12]


__all__ = ["PROMPT_VERSION", "render_messages", "retry_message", "rules_text", "prompt_hash"]
