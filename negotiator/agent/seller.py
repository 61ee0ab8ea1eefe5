"""``SellerAgent``: the seller a commerce app embeds.

::

    agent = SellerAgent(model="openai/gpt-4o-mini",
                        instructions="Friendly, concise. Brand: Oakline Furniture.",
                        limits={"minimum": {"price": 900}})
    turn = await agent.respond(scenario, transcript)      # or agent.respond_sync(...)
    turn.action          # MakeOffer | Accept | WalkAway, always within the limits
    turn.guard           # what the guard changed, if anything

The seller sees its own preferences and limits plus the public transcript, never the
buyer's. The guard is always on.

By default the seller is *assisted*: a negotiation strategy (``negotiator.strategy``; by
default the responsive one, which answers the buyer's concessions and reads its words with
the keyword reader) works out the offers worth its target on each move and whether to
accept, and the model chooses among them and writes the words. A trained model plays the
strategy it trained with: the default, ``local/gemma-3-270m-reader``, only reads the buyer's
words (``menu=readings``), and the strategy moves and writes the message. ``strategy=None`` (or
``?strategy=none`` in a spec) is the pure LLM policy: the model writes its own terms.
A spec string can carry the strategy and its business settings:
``local/gemma-3-270m?strategy=linear&leeway=0.05``, ``openai/gpt-4o-mini?strategy=none``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from types import EllipsisType
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from pydantic import ValidationError

from ..actions import play
from ..domain.protocol import ProtocolState
from ..domain.scenario import HardLimits, Listing
from ..errors import InvalidOffer, ProtocolError, UsageError, first_error
from ..llm.graph import RetryPolicy
from ..llm.party import LLMParty, ModeOption
from ..models.base import ChatModel
from ..models.specs import STRATEGY_KEYS, parse_spec, with_params
from ..party import PartyView, PublicMove, TurnRecord
from ..strategy import Strategy

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

# The trained reader (docs/decisions.md), greedy: the same buyer words, the same reading and move.
DEFAULT_SELLER = "local/gemma-3-270m-reader?temperature=0"
DEFAULT_STRATEGY = "responsive"  # measured against boulware on heldout and talk: docs/strategy.md


def seller_strategy(strategy: Strategy | str | None, params: dict | None = None) -> Strategy | None:
    """The strategy for a name (``none`` for the pure LLM policy) and its settings, or a UsageError."""
    if strategy is None or isinstance(strategy, Strategy):
        if params:
            raise UsageError(f"strategy settings {sorted(params)} need a named strategy, e.g. strategy=boulware")
        return strategy
    name = str(strategy).strip().lower()
    if name == "none":
        if params:
            raise UsageError(f"strategy=none (the pure LLM policy) takes no strategy settings, got {sorted(params)}")
        return None
    settings = dict(params or {})
    if "custom" in settings:
        raise UsageError(
            f"custom={settings['custom']} names a Strategy object built in code (a schedule or acceptance "
            "beyond what a spec can write), recorded by a fingerprint: a spec cannot rebuild it; pass the "
            "object itself, SellerAgent(model, strategy=...)"
        )
    if "exponent" in settings:
        settings["e"] = settings.pop("exponent")
    try:
        return Strategy.named(name, settings)
    except ValueError as e:
        raise UsageError(str(e)) from None  # names the strategies when the name is the mistake


def strategy_settings(text: str) -> dict[str, str]:
    """The seller-spec settings of a strategy written as ``boulware``,
    ``boulware?candidates=3&leeway=0.02`` or ``none`` (the pure LLM policy):
    ``{"strategy": "boulware", "candidates": "3", ...}``."""
    name, _, query = str(text).partition("?")
    return {"strategy": name, **dict(parse_qsl(query, keep_blank_values=True))}


def parse_strategy(text: str) -> Strategy | None:
    """The strategy ``text`` writes (see :func:`strategy_settings`), or a UsageError."""
    settings = strategy_settings(text)
    return seller_strategy(settings.pop("strategy"), settings or None)


def strategy_params(text: str) -> str:
    """The seller-spec query that plays ``text`` (``boulware?candidates=3`` -> ``strategy=boulware&candidates=3``)."""
    return urlencode(strategy_settings(text))


def split_spec(model: str | ChatModel, *, trained: bool = True) -> tuple[str | ChatModel, dict[str, str]]:
    """(the model's own spec, the strategy parameters) of a seller spec; with ``trained``, a
    training run's (or shipped seller's) strategy unless the spec names one."""
    if not isinstance(model, str):
        return model, {}
    s = parse_spec(model)
    ours = {k: v for k, v in s.params.items() if k in STRATEGY_KEYS}
    if trained and s.kind == "local" and "strategy" not in ours:  # a training run plays the strategy it trained with
        from ..models.local.servers import trained_strategy

        plays = trained_strategy(s.name)
        if plays is not None:
            ours = {**strategy_settings(plays), **ours}
    if not ours:
        return model, {}
    rest = {k: v for k, v in s.params.items() if k not in STRATEGY_KEYS}
    base = s.raw.partition("?")[0]
    return (f"{base}?{urlencode(rest)}" if rest else base), ours


def _written(strategy: Strategy) -> dict[str, str]:
    """A ``Strategy`` object's settings as a spec writes them; one built in code beyond what a
    spec can say is named by its menu, words and a fingerprint of its fields (``custom=``)."""
    settings = strategy.settings()
    if settings is not None:
        return {("exponent" if k == "e" else k): v for k, v in settings.items()}  # a seller spec's word for e
    digest = hashlib.sha256(repr(strategy).encode()).hexdigest()[:10]
    return {"menu": strategy.menu, "words": strategy.words, "custom": digest}


def _recorded(model: str, strategy: Strategy | str | None | EllipsisType, generation: dict) -> str:
    """The name episodes record for ``SellerAgent(model, strategy=..., temperature=...)``: the spec,
    with what the arguments set written into it, so that two sellers that play or sample differently
    never share a name (a ``Strategy`` object by every setting it was given). A spec's own strategy
    wins, as in play."""
    own = parse_spec(model).params
    given: dict[str, object] = {k: v for k, v in generation.items() if v is not None}
    if not (isinstance(strategy, EllipsisType) or "strategy" in own):
        if strategy is None:
            given["strategy"] = "none"
        elif isinstance(strategy, Strategy):
            given.update(strategy=strategy.name, **_written(strategy))
        else:
            given.update(strategy_settings(strategy))
    given = {k: v for k, v in given.items() if k not in own}
    return with_params(model, given) if given else model


class SellerAgent(LLMParty):
    """The seller a commerce app embeds: an LLM party that always plays the seller, guarded.

    The guard cannot be switched off: no offer or accept crosses the listing's, the negotiation's
    or these ``limits``. Run it with ``Sessions`` (live negotiations) or ``respond`` (one move).

    Args:
        model: a spec (``local/gemma-3-270m-reader?temperature=0``, the default; ``openai/gpt-4o-mini``;
            ``hosted_vllm/MODEL``; ``scripted/boulware`` in tests), strategy settings after ``?``,
            or a ``ChatModel``.
        instructions: the business's voice and words (``"Friendly, concise. Brand: Oakline."``).
        limits: the business's hard limits (``HardLimits`` or its dict), on top of each listing's own.
        strategy: the negotiation strategy the model chooses among; ``None`` or ``"none"``: the model
            writes its own terms; unset: the one a trained model trained with, else ``responsive``;
            a ``?strategy=`` in the spec wins.
        mode: ``auto``, ``json`` or ``tools``: how the model answers.
        max_retries: how often an unusable answer is sent back with feedback before the fallback move.
        base_url: a LiteLLM server's URL (``hosted_vllm/...``).
        api_key: a LiteLLM provider's key.
        temperature: sampling temperature (unset: the model's own; a spec's ``?temperature=`` is the
            same setting: give it once).
        max_tokens: token limit of one turn (unset: 256; or the spec's ``?max_tokens=``).
        retry: backoff and timeout of provider calls (``RetryPolicy``).
        constrain: in json mode, ask for decoding constrained to the action's JSON schema where the backend can.
        tracer: the OpenTelemetry tracer (default: the global one).
        spec: the name episodes record (default: ``model`` with the arguments that change play).
        seed: seeds sampling per turn (each call sends a seed derived from it and the turn, so reruns
            meet the same random numbers; None sends none).
        wrap_model: wraps the resolved chat model (a rate limiter, a recorder).
    """

    def __init__(
        self,
        model: str | ChatModel = DEFAULT_SELLER,
        *,
        instructions: str = "",
        limits: HardLimits | dict | None = None,
        strategy: Strategy | str | None | EllipsisType = ...,
        mode: ModeOption = "auto",
        max_retries: int = 2,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        retry: RetryPolicy | None = None,
        constrain: bool = True,
        tracer: Tracer | None = None,
        spec: str | None = None,
        seed: int | None = None,
        wrap_model: Callable[[ChatModel], ChatModel] | None = None,
    ):
        if spec is None and isinstance(model, str):
            spec = _recorded(model, strategy, {"temperature": temperature, "max_tokens": max_tokens})
        # A strategy named in the spec wins; then the ``strategy`` argument; then the strategy a
        # trained model (the default included) trained with; then the default strategy.
        model, params = split_spec(model, trained=isinstance(strategy, EllipsisType))
        if params:
            strategy = params.pop("strategy", strategy)
        if isinstance(strategy, str) and "?" in strategy:  # written as train and the manifests write it
            written = strategy_settings(strategy)
            strategy = written.pop("strategy")
            params = {**written, **(params or {})}  # the spec's settings win
        if isinstance(strategy, EllipsisType):
            strategy = DEFAULT_STRATEGY
        plan = seller_strategy(strategy, params)
        super().__init__(
            model,
            role="seller",
            instructions=instructions,
            limits=limits,
            mode=mode,
            max_retries=max_retries,
            guard=True,
            base_url=base_url,
            api_key=api_key,
            temperature=temperature,
            max_tokens=max_tokens,
            retry=retry,
            constrain=constrain,
            tracer=tracer,
            spec=spec,
            strategy=plan,
            seed=seed,
            wrap_model=wrap_model,
        )

    def __repr__(self) -> str:
        strategy = self.strategy.name if self.strategy is not None else "none"
        return f"SellerAgent({self.spec!r}, strategy={strategy!r}, mode={self.mode!r}, limits={self.limits!r})"

    def __getstate__(self) -> None:
        # Its model client (an HTTP client, a local server's process) belongs to this process.
        raise TypeError(
            f"a SellerAgent cannot be pickled or copied: it holds its model's client; send the spec ({self.spec!r}) "
            "and the limits to the worker process and build a SellerAgent there"
        )

    def view(self, scenario: Listing | dict, transcript: Sequence[PublicMove | dict] = ()) -> PartyView:
        """The seller's view after ``transcript``; checks that it is the seller's move."""
        scenario = _listing(scenario)
        if isinstance(transcript, (str, bytes, dict)) or not isinstance(transcript, Sequence):
            raise UsageError(
                f"transcript must be a list of moves ({{'party': ..., 'action': {{...}}}} or PublicMove), "
                f"not {type(transcript).__name__}"
            )
        moves: list[PublicMove] = []
        state = ProtocolState(opener=scenario.opener, max_turns=scenario.max_turns)
        for i, raw in enumerate(transcript, 1):
            try:
                m = raw if isinstance(raw, PublicMove) else PublicMove.model_validate(raw)
            except ValidationError as e:
                raise UsageError(
                    f"transcript move {i} is not a move: {first_error(e)}; a move is a PublicMove or "
                    "{'party': 'buyer' or 'seller', 'action': {'action': 'make_offer', 'terms': {...}, 'message': '...'}}"
                ) from None
            try:  # the one turn step (actions.play): the app's transcript is checked like any move
                action = play(state, scenario.space, m.party, m.action)
            except ProtocolError as e:
                raise UsageError(f"transcript move {i} ({m.party} {m.action.action}) is not allowed: {e}") from None
            except InvalidOffer as e:
                raise UsageError(f"transcript move {i} ({m.party} make_offer) has invalid terms: {e}") from None
            moves.append(m if action is m.action else PublicMove(party=m.party, action=action))
        if state.done:
            raise UsageError(f"the negotiation has already ended ({state.ended_by})")
        if state.to_move != "seller":
            raise UsageError("it is the buyer's move, not the seller's")
        if self.limits is not None:
            try:
                scenario.check_limits(self.limits)
            except ValueError as e:
                raise UsageError(
                    f"the seller's limits do not fit listing {scenario.id!r}: {e}; its issues are "
                    f"{', '.join(scenario.space.names)}"
                ) from None
        return PartyView.of(scenario, "seller", moves, self.limits)

    async def respond(self, scenario: Listing | dict, transcript: Sequence[PublicMove | dict] = ()) -> TurnRecord:
        """The seller's next move in ``scenario`` after ``transcript``."""
        return await self._turn(self.view(scenario, transcript))  # view() merged the limits already

    def respond_sync(self, scenario: Listing | dict, transcript: Sequence[PublicMove | dict] = ()) -> TurnRecord:
        """``respond`` for synchronous code (not from inside a running event loop), from any thread:
        every call runs on one event loop the process keeps in a thread of its own."""
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        if in_loop:
            raise UsageError("respond_sync was called inside a running event loop; await respond(...) instead")
        # On the process's one loop for synchronous callers, not a new loop a call: a model client (LiteLLM's
        # logging worker among them) binds to the loop it first runs on, and threads calling at once each
        # with a loop of their own left its tasks on the wrong loop ("bound to a different event loop").
        future = asyncio.run_coroutine_threadsafe(self.respond(scenario, transcript), _sync_loop())
        try:
            return future.result()
        except BaseException:  # Ctrl-C, or the caller's own timeout: the turn stops too
            future.cancel()
            raise


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _sync_loop() -> asyncio.AbstractEventLoop:
    """The event loop ``respond_sync`` runs turns on, in a daemon thread of its own, started on first use
    (again in a forked child, which has the loop's state but not its thread)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="negotiator-respond-sync", daemon=True).start()
        return _loop


def _forget_loop() -> None:
    global _loop, _loop_lock
    _loop, _loop_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_loop)


def _listing(scenario: object) -> Listing:
    """``scenario`` as a Listing (a Scenario is one; a dict is validated), or a UsageError naming what is wrong."""
    if isinstance(scenario, Listing):
        return scenario
    if not isinstance(scenario, dict):
        raise UsageError(f"the listing must be a Listing (or a dict of one), not {type(scenario).__name__}")
    try:
        return Listing.model_validate(scenario)
    except ValidationError as e:
        raise UsageError(f"invalid listing: {first_error(e)}") from None
