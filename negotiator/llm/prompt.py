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
from ..strategy import Advice, Candidate, Strategy
from .assist import answer_json

PROMPT_VERSION = "4"
Mode = Literal["json", "tools"]

RETRY_TEMPLATE = "Your reply could not be used: {feedback} Reply again with one valid action."

# Version 2 is compact for small models (the embedded Gemma 3 270M reads every token on a CPU):
# one line per issue with the options best-first, the worth of every offer to you, a worked
# example exchange in this very outcome space, and short turn messages. Version 3 adds the
# assisted mode: with a strategy, each turn message ends with the strategy's options and
# the model answers with a choice (negotiator.llm.assist). Version 4 tells the seller what it may
# promise (the listing, its policies, the move's terms) before the guard has to remove the rest;
# a clause "no sale until an offer is accepted" made the 270M claim sales (docs/guard.md).


def _issue_line(view: PartyView, issue: NumericIssue | DiscreteIssue) -> str:
    unit = f" {issue.unit}" if issue.unit else ""
    if isinstance(issue, NumericIssue):
        vf = view.preferences.values[issue.name]
        better = "higher" if vf.best > vf.worst else "lower"  # type: ignore[union-attr]
        return f"- {issue.name}: {_fmt(issue.low)} to {_fmt(issue.high)}{unit}, {better} is better for you"
    ranked = sorted(issue.options, key=lambda o: -view.preferences.issue_value(issue.name, o))
    return f"- {issue.name}: one of {', '.join(json.dumps(o) for o in ranked)}{unit} (best for you first)"


def rules_text(
    view: PartyView,
    instructions: str = "",
    mode: Mode = "json",
    assisted: bool = False,
    menu: str = "offers",
    words: str = "model",
) -> str:
    """The standing instructions: role, product, issues, own priorities, limits, format."""
    sc, me, them = view.scenario, view.role, other(view.role)
    deal = "selling" if me == "seller" else "buying"
    product = sc.product.name + (f" ({sc.product.description.rstrip('.')})" if sc.product.description else "")
    if assisted and menu == "moves" and words == "strategy":
        return _decision_rules(view, product, them)
    lines = [f"You are the {me}, {deal}: {product}."]
    if instructions.strip():
        lines.append(instructions.strip())
    if sc.product.policies:
        lines.append("The shop's policies, the only ones you may cite: " + " ".join(sc.product.policies))
    if me == "seller":  # what a business answers for: the guard removes anything else (llm.grounding)
        backed = "this listing, its policies and your offer" if sc.product.policies else "this listing and your offer"
        lines.append(
            f"Say only what {backed} hold: no refunds, returns, fees, taxes, deposits, gifts, deadlines or "
            "conditions of your own, and no other prices or currencies."
        )
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
    said = ', "message": "..."' if words == "model" else ""
    if assisted and menu == "moves":
        lines.append(
            f"Each turn you choose your move; each comes worked out, with its worth to you: hold (your last "
            f"offer's worth again), step (the usual concession), big_step (a bigger one), final (your final "
            f"offer: say it is final), accept the {them}'s offer, or walk_away. Read the {them}'s words and moves: "
            f"concede to a {them} that concedes or will really walk, hold against one that bluffs or stands still."
            + (" Write a short message in your own words; state only the terms of your move." if said else "")
        )
        if mode == "json":
            lines.append(
                f'Reply with one JSON object only: {{"action": "make_offer", "choice": "step"{said}}}, '
                f'{{"action": "accept"{said}}} or {{"action": "walk_away"{said}}}.'
            )
        else:
            lines.append("Act by calling exactly one tool: make_offer (with the move), accept or walk_away.")
    elif assisted:
        lines.append(
            f"Each turn you get options worked out for you: offers worth the same to you that trade the other issues "
            f"differently (the one the {them} should like best first), and accepting when the {them}'s offer is good "
            "enough. Choose one and write a short message in your own words; state only the terms of your choice."
        )
        if mode == "json":
            lines.append(
                'Reply with one JSON object only: {"action": "make_offer", "choice": "A", "message": "..."} '
                'or {"action": "accept", "message": "..."}.'
            )
        else:
            lines.append("Act by calling exactly one tool: make_offer (with the option's id) or accept.")
    elif mode == "json":
        lines.append(
            'Reply with one JSON object only: {"action": "make_offer", "message": "...", "terms": {...}}, '
            '{"action": "accept", "message": "..."} or {"action": "walk_away", "message": "..."}.'
        )
    else:
        lines.append("Act by calling exactly one tool: make_offer, accept or walk_away.")
    return "\n".join(lines)


def _decision_rules(view: PartyView, product: str, them: str) -> str:
    """The decision view's rules (``menu=moves, words=strategy``): the model chooses the move and
    nothing else, so it reads no issue list and writes no words; the strategy prices each move."""
    floor = view.limits.utility_floor(view.preferences)
    return "\n".join(
        [
            f"You are the seller, selling: {product}.",
            f"Each turn choose your move: hold (your last offer's worth again), step (the usual concession), "
            f"big_step (a bigger one), final (your final offer), accept (the {them}'s offer), walk_away (no deal). "
            f"Each is shown with its worth to you, from 0 to 1; your walk-away value is {floor:.2f}.",
            f"Read the {them}'s words and moves: concede to a {them} that concedes or will really walk, hold "
            "against one that bluffs or stands still. No deal after the last round means no deal.",
            f"{view.max_turns // 2} rounds. Reply with one JSON object only: "
            '{"action": "make_offer", "choice": "step"}, {"action": "accept"} or {"action": "walk_away"}.',
        ]
    )


def _limits_text(view: PartyView) -> str:
    parts = [f"{k} at least {_fmt(v)}" for k, v in view.limits.minimum.items()]
    parts += [f"{k} at most {_fmt(v)}" for k, v in view.limits.maximum.items()]
    parts += [f"{k} never {', '.join(str(o) for o in opts)}" for k, opts in view.limits.forbidden.items()]
    return "; ".join(parts)


def _terms(terms: Offer) -> str:
    return json.dumps(terms, ensure_ascii=False)


def advice_text(advice: Advice, them: str, compact: bool = False) -> str:
    """The strategy's options, as the assisted model reads them at the end of its turn message."""
    if advice.menu == "moves":
        return _moves_text(advice, them, compact)
    lines = []
    if advice.final_move:
        lines.append("This is the last move of the negotiation: an offer now can no longer be accepted.")
    if advice.accept:
        lines.append(f"The {them}'s offer is worth {advice.standing_worth:.2f} to you: accept it.")
    else:
        lines.append("Your options:")
        lines += [f"{c.id}: {_terms(c.terms)} (worth {c.worth:.2f} to you)" for c in advice.candidates]
        if advice.can_accept:
            lines.append(f"Or accept the {them}'s offer (worth {advice.standing_worth:.2f} to you).")
    lines.append(f"Recommended: {advice.recommended}.")
    return "\n".join(lines)


_MOVE_NOTES = {"hold": "your last offer's worth", "final": "your final offer"}


def _moves_text(advice: Advice, them: str, compact: bool = False) -> str:
    """The decision view: how the other side moved and what its words say, then every move priced
    (``compact``: each move by its worth alone, on one line)."""
    lines = []
    if advice.final_move:
        lines.append("This is the last move of the negotiation: an offer now can no longer be accepted.")
    if advice.standing_worth is not None:
        lines.append(f"The {them} has come {advice.conceded:.2f} of the way toward you (0 none, 1 all the way).")
    read = _hints_text(advice)
    if read:
        lines.append(f"A keyword reading of the {them}'s words: {read}.")
    if compact:  # the recommended move first: a small model's pull toward the first option follows the strategy
        menu = [f"{c.id} {c.worth:.2f}" for c in advice.candidates]
        menu += [f"accept {advice.standing_worth:.2f}"] if advice.can_accept else []
        menu += ["walk_away"] if advice.can_walk_away else []
        menu.sort(key=lambda m: m.split()[0] != advice.recommended)
        lines.append("Moves: " + " | ".join(menu))
    else:
        lines.append("Your moves:")
        for c in advice.candidates:
            note = f", {_MOVE_NOTES[c.id]}" if c.id in _MOVE_NOTES else ""
            lines.append(f"{c.id}: {_terms(c.terms)} (worth {c.worth:.2f} to you{note})")
        if advice.can_accept:
            lines.append(f"accept: the {them}'s offer (worth {advice.standing_worth:.2f} to you)")
        if advice.can_walk_away:
            lines.append("walk_away: no deal")
    lines.append(f"Recommended: {advice.recommended}.")
    return "\n".join(lines)


def _hints_text(advice: Advice) -> str:
    h = advice.hints
    parts = []
    if h.threat:
        parts.append(f"a threat to walk away ({h.threats} so far)")
    if h.hurry:
        parts.append("in a hurry")
    if h.quote:
        parts.append("quotes " + _terms(h.quote))
    if h.priorities:
        parts.append("cares most about " + ", ".join(h.priorities))
    return "; ".join(parts)


def _move_text(view: PartyView, move: PublicMove, compact: bool = False) -> str:
    who = "You" if move.party == view.role else f"The {move.party}"
    a = move.action
    said = f' and said: "{a.message}"' if a.message else ""
    if isinstance(a, MakeOffer):
        worth = view.utility(a.terms)
        if compact:
            return f"{who} offered terms worth {worth:.2f} to you{said}."
        return f"{who} offered {_terms(a.terms)} (worth {worth:.2f} to you){said}."
    if isinstance(a, Accept):
        return f"{who} accepted{said}."
    return f"{who} walked away{said}."


def _turn_prompt(
    view: PartyView, since: list[PublicMove], turn: int, advice: Advice | None = None, compact: bool = False
) -> str:
    """The user message before the move at index ``turn``: what the other side did since."""
    lines = [_move_text(view, m, compact) for m in since]
    if turn == 0:
        lines.append(f"You open; the {other(view.role)} has made no offer yet.")
    rounds = view.max_turns // 2
    left = (view.max_turns - turn + 1) // 2
    last = " This is your last turn." if left == 1 else ""
    lines.append(f"Round {turn // 2 + 1} of {rounds}; your move.{last}")
    if not any(m.party != view.role and isinstance(m.action, MakeOffer) for m in view.transcript[:turn]):
        lines.append("There is no offer to accept yet.")
    if advice is not None:
        lines.append(advice_text(advice, other(view.role), compact))
    return "\n".join(lines)


_EXAMPLE_USER = "Example: round 1 of {rounds}; your move."
_REAL_START = "End of example. The real negotiation starts now."


_EXAMPLE_LATER = (
    "Example: the {them} offered terms worth 0.35 to you. Round 2 of {rounds}; your move.\n"
    "The {them} has come 0.10 of the way toward you (0 none, 1 all the way).\n"
    "Moves: step 0.96 | hold 1.00 | big_step 0.90 | final 0.72 | accept 0.35 | walk_away\nRecommended: step."
)


def _example(view: PartyView, strategy: Strategy | None, compact: bool) -> list[tuple[str, str]]:
    """Worked moves on this very outcome space: the shape to copy (the decision view adds a
    later move, so a small model sees a choice that is not the first on the list)."""
    ideal = view.preferences.ideal(view.space)
    offer = MakeOffer(terms=ideal, message="Thanks for your interest. Here is my proposal.")
    user = _EXAMPLE_USER.format(rounds=view.max_turns // 2)
    if strategy is None:
        return [(user, action_to_json(offer))]
    worth = view.utility(ideal)
    cid = "hold" if strategy.menu == "moves" else "A"
    advice = Advice(
        target=worth,
        floor=0.0,
        progress=0.0,
        final_move=False,
        candidates=(Candidate(cid, ideal, worth),),
        menu=strategy.menu,
        words=strategy.words,
    )
    text = advice_text(advice, other(view.role), compact)
    pairs = [(f"{user}\n{text}", answer_json(offer, advice))]
    if compact:
        later = _EXAMPLE_LATER.format(them=other(view.role), rounds=view.max_turns // 2)
        pairs.append((later, json.dumps({"action": "make_offer", "choice": "step"})))
    return pairs


def _compact(strategy: Strategy | None) -> bool:
    """The decision view: the model decides only (priced moves, the strategy's words)."""
    return strategy is not None and strategy.menu == "moves" and strategy.words == "strategy"


def render_messages(
    view: PartyView,
    instructions: str = "",
    mode: Mode = "json",
    strategy: Strategy | None = None,
    advice: Advice | None = None,
) -> list[dict]:
    """The chat for the model that acts in ``view``; append-only across the negotiation.

    With a ``strategy`` (the assisted seller) each turn message ends with that turn's advice,
    recomputed for past turns from the transcript as it stood (the strategy is
    deterministic, so the history reads exactly as the model saw it); ``advice`` is this
    turn's, when the caller has it already.
    """
    if strategy is not None and strategy.menu == "readings":
        return reading_messages(view)
    compact = _compact(strategy)
    examples = _example(view, strategy, compact)
    messages: list[dict] = [
        {
            "role": "system",
            "content": rules_text(
                view,
                instructions,
                mode,
                assisted=strategy is not None,
                menu=strategy.menu if strategy else "offers",
                words=strategy.words if strategy else "model",
            ),
        },
    ]
    for ex_user, ex_answer in examples:
        messages += [{"role": "user", "content": ex_user}, {"role": "assistant", "content": ex_answer}]
    first = True  # the first real turn message closes the example
    since: list[PublicMove] = []

    def user(turn: int, advice: Advice | None) -> dict:
        nonlocal first
        text = _turn_prompt(view, since, turn, advice, compact)
        if first:
            text, first = f"{_REAL_START}\n{text}", False
        return {"role": "user", "content": text}

    def advice_at(turn: int) -> Advice | None:
        if strategy is None:
            return None
        past = view.model_copy(update={"transcript": view.transcript[:turn], "turn": turn})
        return strategy.advise(past.situation())

    for i, move in enumerate(view.transcript):
        if move.party == view.role:
            past_advice = advice_at(i)
            messages.append(user(i, past_advice))
            answer = action_to_json(move.action) if past_advice is None else answer_json(move.action, past_advice)
            messages.append({"role": "assistant", "content": answer})
            since = []
        else:
            since.append(move)
    if strategy is not None and advice is None:
        advice = advice_at(view.turn)
    messages.append(user(view.turn, advice))
    return messages


_READ_RULES = (
    "You read what a {them} says in a negotiation over {product}. In any language, do its words say it "
    "is in a hurry (it must close soon, is short of time, has a deadline), or name a competing quote (a "
    "price it was offered elsewhere, or how much cheaper another seller is)? Reply with one JSON object "
    'only: {{"read": "hurry"}}, {{"read": "quote"}} or {{"read": "none"}} when they say neither.'
)


def reading_messages(view: PartyView) -> list[dict]:
    """The readings menu's chat (``menu=readings``): what the other side has said so far, and the
    question, on every turn afresh. The reading is of the words alone, so the chat carries no
    history of moves; the strategy makes the move on the reading."""
    sc, them = view.scenario, other(view.role)
    said = [m.action.message for m in view.transcript if m.party != view.role and m.action.message]
    if said:
        lines = [f"The {them}'s messages so far, oldest first:"]
        lines += [f'{i}. "{text}"' for i, text in enumerate(said, 1)]
    else:
        lines = [f"The {them} has said nothing yet."]
    lines.append("What do its words say?")
    return [
        {"role": "system", "content": _READ_RULES.format(them=them, product=sc.product.name)},
        {"role": "user", "content": "\n".join(lines)},
    ]


def retry_message(raw: str, feedback: str) -> list[dict]:
    """What is appended after an unusable answer: the answer, then the feedback."""
    return [
        {"role": "assistant", "content": raw or "(empty)"},
        {"role": "user", "content": RETRY_TEMPLATE.format(feedback=feedback)},
    ]


def prompt_hash(instructions: str, mode: Mode, strategy: Strategy | None = None) -> str:
    """Identifies the prompt format + instructions (+ the strategy) in episode provenance."""
    key = f"{PROMPT_VERSION}|{mode}|{instructions}" + (f"|{strategy!r}" if strategy is not None else "")
    return hashlib.sha256(key.encode()).hexdigest()[:12]


__all__ = ["PROMPT_VERSION", "advice_text", "render_messages", "retry_message", "rules_text", "prompt_hash"]
