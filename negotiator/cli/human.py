"""A person as the buyer at the terminal: the party behind ``negotiator play``."""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import sys
import threading
from collections.abc import Callable

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.issues import DiscreteIssue, NumericIssue, Offer, _fmt
from ..domain.scenario import Scenario
from ..domain.utility import LinearValue, Preferences
from ..errors import InvalidOffer
from ..party import AnyAction, PartyView, TurnRecord


def example_offer(scenario: Scenario, prefs: Preferences) -> str:
    """An ``offer ...`` line valid in ``scenario``: numeric issues at the middle of their range,
    discrete ones at the option this side likes best."""
    parts = []
    for issue in scenario.issues:
        if isinstance(issue, NumericIssue):
            value = issue.snap((issue.low + issue.high) / 2)
        else:
            value = prefs.best_value(issue)
        parts.append(f"{issue.name}={_fmt(value)}")
    return "offer " + " ".join(parts)


def help_text(scenario: Scenario, prefs: Preferences) -> str:
    return (
        "Your move. Type one of:\n"
        f"  {example_offer(scenario, prefs)} : my offer\n"
        "      make an offer (issues you leave out keep your last offer's value; the text after ':' is your message)\n"
        "  accept [: message]   accept the seller's standing offer\n"
        "  walk [: message]     walk away\n"
        "  help                 show this again"
    )


def what_is_better(issue: NumericIssue | DiscreteIssue, prefs: Preferences) -> str:
    """Which values of ``issue`` are better for the side with ``prefs``."""
    vf = prefs.values[issue.name]
    if isinstance(issue, NumericIssue):
        assert isinstance(vf, LinearValue)
        direction = "lower" if vf.best < vf.worst else "higher"
        return f"{direction} is better ({_fmt(issue.snap(vf.best))} best, {_fmt(issue.snap(vf.worst))} worst)"
    ranked = sorted(issue.options, key=lambda o: -vf(o))
    return " > ".join(f"{o} ({vf(o):.2f})" for o in ranked)


def your_score(prefs: Preferences, terms: Offer) -> float:
    """What ``terms`` would score for the side with ``prefs``: the evaluation's score, (U - r) / (1 - r),
    before it is clipped to [0, 1], so an offer worse than walking away shows how much worse (below 0)."""
    return (prefs.utility(terms) - prefs.reservation) / (1.0 - prefs.reservation)


SCALE = (
    "Scores: every offer is scored for you from 0 (no better than walking away, which is what no deal "
    "gets you) to 1 (your best terms on every issue); below 0 it is worse than walking away. "
    "The deal at the end is scored the same way."
)


def preferences_table(scenario: Scenario, prefs: Preferences) -> Table:
    table = Table(title="what you care about (private: the seller does not see it)", title_justify="left")
    for col in ("issue", "allowed", "weight", "better for you (share of the weight each option earns)"):
        table.add_column(col, overflow="fold")  # a narrow terminal wraps a value, never cuts it
    for issue in scenario.issues:
        table.add_row(issue.name, issue.describe(), f"{prefs.weights[issue.name]:.2f}", what_is_better(issue, prefs))
    return table


def read_line(prompt: str) -> str:
    """``input(prompt)``, stopped by the first Ctrl-C. Under ``asyncio.run`` a Ctrl-C only cancels the
    running task, which a move being typed notices only after Enter: the person pressed Ctrl-C and
    nothing happened. While it waits for a line, Ctrl-C raises KeyboardInterrupt at once."""
    if threading.current_thread() is not threading.main_thread():
        return input(prompt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if os.name == "posix" and sys.stdin.isatty() and sys.stdout.isatty():
            # The kernel may hand Ctrl-C to any thread (OpenBLAS keeps one): Python then raises it in the
            # main thread only once that thread runs again, and a read() blocked on the terminal never
            # does. So wait for the line here, waking every 0.1 s; a terminal gives select() a whole line.
            sys.stderr.write(prompt)  # where input() writes it on a terminal
            sys.stderr.flush()
            while not select.select([sys.stdin], [], [], 0.1)[0]:
                pass
            return input()
        return input(prompt)
    finally:
        signal.signal(signal.SIGINT, previous)


class HumanBuyer:
    """A person typing moves at the terminal."""

    spec, family, role = "human", "human", "buyer"

    def __init__(self, scenario: Scenario, console: Console, ask: Callable[[str], str] = read_line):
        self.scenario, self.console, self.ask = scenario, console, ask
        self.help = help_text(scenario, scenario.buyer)

    def parse(self, line: str, view: PartyView) -> AnyAction:
        if any("\udc80" <= c <= "\udcff" for c in line):  # bytes Python could not decode, kept as surrogates
            raise ValueError(
                "your move holds bytes that are not UTF-8 text: set the terminal to UTF-8 and type it again"
            )
        try:
            return self._parse(line, view)
        except ValidationError as e:  # pydantic's report is several lines and a link: one line per problem here
            raise ValueError(
                "; ".join(
                    f"your {'.'.join(map(str, x['loc']))}: {x['msg'][:1].lower()}{x['msg'][1:]}" for x in e.errors()
                )
            ) from None

    def _parse(self, line: str, view: PartyView) -> AnyAction:
        cmd, _, message = line.partition(":")
        try:
            words = shlex.split(cmd)
        except ValueError:  # shlex's own words, "No closing quotation", say nothing of what to do
            raise ValueError("a quote is left open: close it, or write the move without quotes") from None
        if not words:
            raise ValueError("empty move")
        verb, args = words[0].lower(), words[1:]
        message = message.strip()
        if verb == "accept":
            if view.standing_offer is None:
                raise ValueError("there is no seller offer to accept yet")
            return Accept(message=message)
        if verb in ("walk", "walk_away"):
            return WalkAway(message=message)
        if verb != "offer":
            raise ValueError(f"unknown move {verb!r}; type help")
        terms = dict(view.own_last_offer or {})
        for a in args:
            k, eq, v = a.partition("=")
            if not eq:
                raise ValueError(f"write issue=value, not {a!r}")
            if k not in view.space.names:
                raise ValueError(f"{k!r} is not an issue here; the issues are {', '.join(view.space.names)}")
            issue = view.space.issue(k)
            if isinstance(issue, NumericIssue):
                try:
                    terms[k] = int(v)
                except ValueError:
                    try:  # 449.5, 1e3; nan and inf are refused with the offer's own words
                        terms[k] = float(v)
                    except ValueError:
                        example = _fmt(issue.snap((issue.low + issue.high) / 2))
                        raise ValueError(
                            f"{k} must be a number ({issue.describe()}), in digits: {k}={example}"
                        ) from None
            else:
                try:
                    terms[k] = json.loads(v)
                except json.JSONDecodeError:
                    terms[k] = v
        missing = [n for n in view.space.names if n not in terms]
        if missing:
            raise ValueError(f"your first offer names every issue; missing: {', '.join(missing)}")
        return MakeOffer(terms=view.space.validate_offer(terms), message=message)

    def _confirm_below_walk_away(self, view: PartyView) -> bool:
        assert view.standing_offer is not None  # parse() accepts only a standing offer
        score = your_score(view.preferences, view.standing_offer)
        if score >= 0:
            return True
        self.console.print(f"[bold yellow]The seller's offer scores {score:.2f} for you: worse than walking away.[/]")
        return self.ask("Accept it anyway? [y/N] ").strip().lower() in ("y", "yes")

    async def act(self, view: PartyView) -> TurnRecord:
        last = view.transcript[-1] if view.transcript else None
        if last is not None:
            a = last.action
            self.console.print(f"\n[bold cyan]seller[/] {a.action}: {escape(a.message)}")
            if isinstance(a, MakeOffer):
                self.console.print("  terms: " + escape(view.space.format_offer(a.terms)), soft_wrap=True)
        standing = view.standing_offer
        offer = (
            f"the seller's offer scores {your_score(view.preferences, standing):.2f} for you"
            if standing
            else "no seller offer yet"
        )
        self.console.print(f"[dim]round {view.round} of {view.max_turns // 2}; {offer}[/]")
        while True:
            try:
                line = self.ask("> ").strip()
            except EOFError:  # input ended (a closed pipe, Ctrl-D): leave the table
                self.console.print("no more input: you walk away")
                return TurnRecord(index=view.turn, party="buyer", action=WalkAway(message=""))
            if line in ("help", "?", ""):
                self.console.print(escape(self.help), soft_wrap=True)
                continue
            try:
                action = self.parse(line, view)
            except (ValueError, InvalidOffer, KeyError) as e:
                self.console.print(f"[red]{escape(str(e))}[/]")
                continue
            if isinstance(action, Accept):
                try:
                    if not self._confirm_below_walk_away(view):
                        self.console.print("not accepted; your move")
                        continue
                except EOFError:
                    self.console.print("no more input: you walk away")
                    return TurnRecord(index=view.turn, party="buyer", action=WalkAway(message=""))
            if isinstance(action, MakeOffer):  # the terms sent: the ones left out, and numbers put on their steps
                self.console.print("  you offer: " + escape(view.space.format_offer(action.terms)), soft_wrap=True)
            return TurnRecord(index=view.turn, party="buyer", action=action)

    async def aclose(self) -> None:
        return None
