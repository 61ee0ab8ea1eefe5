"""An LLM-driven party: the turn graph bound to one model, role and set of instructions."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from pydantic import ValidationError

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.scenario import HardLimits, Role
from ..errors import UsageError, first_error
from ..models.base import ChatModel
from ..models.resolve import resolve_model
from ..models.specs import check_generation, coerce_param, parse_spec
from ..party import AdviceRecord, PartyView, TurnRecord
from ..strategy import Advice, Strategy
from .graph import RetryPolicy, TurnConfig, turn_graph
from .prompt import prompt_hash

ModeOption = Literal["auto", "json", "tools"]


class LLMParty:
    """A seller or buyer whose moves come from a chat model.

    ``mode`` picks how the model acts: ``tools`` (native tool calls), ``json`` (one JSON
    object in the text, for models without a tool template such as Gemma 3) or ``auto``
    (tools when LiteLLM's capability data says the model supports function calling).
    """

    keeps_limits = True  # its own guard checks every move, message included (runtime.run.hold_limits)

    def __init__(
        self,
        model: str | ChatModel,
        *,
        role: Role,
        instructions: str = "",
        mode: ModeOption = "auto",
        max_retries: int = 2,
        guard: bool | None = None,
        limits: HardLimits | dict | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        retry: RetryPolicy | None = None,
        constrain: bool = True,
        tracer=None,
        spec: str | None = None,
        strategy: Strategy | None = None,
        seed: int | None = None,
        wrap_model: Callable[[ChatModel], ChatModel] | None = None,
    ):
        if not isinstance(model, str) and not callable(getattr(model, "complete", None)):
            raise UsageError(
                f"model must be a spec (scripted/boulware, local/gemma-3-270m, openai/gpt-4o-mini, ...) or a "
                f"ChatModel, not {type(model).__name__} {model!r}"
            )
        if mode not in ("auto", "json", "tools"):
            raise UsageError(f"mode must be auto, json or tools, not {mode!r}")
        if not _whole(max_retries) or max_retries < 0:
            raise UsageError(f"max_retries must be a whole number, 0 or more, not {max_retries!r}")
        if not isinstance(instructions, str):
            raise UsageError(f"instructions must be text (str), not {type(instructions).__name__} {instructions!r}")
        if seed is not None and not _whole(seed):
            raise UsageError(f"seed must be a whole number or None, not {seed!r}")
        temperature, max_tokens = _generation(model, temperature, max_tokens)
        self.model = resolve_model(model, base_url=base_url, api_key=api_key)
        if wrap_model is not None:  # a seam for the caller's own layer around every call (evals' rate limits)
            self.model = wrap_model(self.model)
        self.role: Role = role
        self.spec = spec or self.model.spec
        self.family = self.model.family
        self.instructions = instructions
        self.limits = _limits(limits)
        resolved: Literal["json", "tools"] = (
            ("tools" if self.model.supports_tools else "json") if mode == "auto" else mode
        )
        self.mode = resolved
        if tracer is None:
            from ..tracing import get_tracer

            tracer = get_tracer()
        self.config = TurnConfig(
            model=self.model,
            mode=resolved,
            instructions=instructions,
            max_retries=max_retries,
            guard=(role == "seller") if guard is None else guard,
            temperature=temperature,
            max_tokens=max_tokens,
            retry=retry or RetryPolicy(),
            constrain=constrain,
            tracer=tracer,
            strategy=strategy,
            seed=seed,
        )
        self.strategy = strategy
        self._graph = turn_graph()
        # The turn's own step budget (render, a model call and a parse per answer, guard, and LangGraph's one
        # more), so that a caller's graph running the turn from one of its nodes does not lend it its own.
        self._run_config = {"configurable": {"turn": self.config}, "recursion_limit": 2 * (max_retries + 1) + 3}
        self.prompt_hash = prompt_hash(instructions, resolved, strategy)

    async def act(self, view: PartyView) -> TurnRecord:
        if view.role != self.role:
            raise UsageError(f"this party plays the {self.role}, but the view is the {view.role}'s")
        if self.limits is not None:
            try:
                self.limits.check_space(view.space)
                # The stricter of the listing's, the negotiation's and this party's limits: they must leave an
                # offer, or the guard could only repair each offer into one that crosses some limit.
                merged = view.limits.merged(self.limits.on(view.space))
                merged.check_offerable(view.space, view.preferences)
            except ValueError as e:  # the developer's mistake: raised, not recorded as a failed negotiation
                raise UsageError(
                    f"the {self.role}'s limits do not fit scenario {view.scenario.id!r}: {e}; its issues "
                    f"are {', '.join(view.space.names)}"
                ) from None
            view = view.model_copy(update={"limits": merged})
        return await self._turn(view)

    async def _turn(self, view: PartyView) -> TurnRecord:
        """One turn on a view whose limits already include this party's own."""
        t0 = time.perf_counter()
        state = await self._graph.ainvoke({"view": view}, self._run_config)
        return TurnRecord(
            index=view.turn,
            party=self.role,
            action=state["action"],
            raw_output=state.get("raw"),
            invalid_attempts=state["attempts"],
            guard=state.get("guard"),
            advice=_record(state.get("advice"), state["action"], state.get("fallback", False), state.get("reading")),
            fallback=state.get("fallback", False),
            usage=state["usage"],
            latency_s=round(time.perf_counter() - t0, 6),
            prompt_hash=self.prompt_hash,
        )

    async def aclose(self) -> None:
        await self.model.aclose()


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


DEFAULT_MAX_TOKENS = 256  # a seller's turn: a JSON action and a few sentences


def _generation(model: str | ChatModel, temperature: float | None, max_tokens: int | None) -> tuple:
    """The turn's temperature and token limit: the spec's own (``?temperature=0``), else the
    argument, else the default; the two disagreeing is a UsageError, never a silent winner (before,
    the argument's default of 256 tokens overwrote a spec's ``?max_tokens=``)."""
    check_generation({"temperature": temperature, "max_tokens": max_tokens}, lambda key, v: f"{key}={v!r}:")
    given = parse_spec(model).params if isinstance(model, str) else {}
    out: list = []
    for key, arg, default in (("temperature", temperature, None), ("max_tokens", max_tokens, DEFAULT_MAX_TOKENS)):
        if key not in given:
            out.append(default if arg is None else arg)
            continue
        value = coerce_param(given[key])
        if arg is not None and arg != value:
            raise UsageError(f"{model} sets {key}={given[key]} and the argument {key}={arg!r}: give it once")
        out.append(value)
    return tuple(out)


def _limits(limits: HardLimits | dict | None) -> HardLimits | None:
    if limits is None or isinstance(limits, HardLimits):
        return limits
    try:
        return HardLimits.model_validate(limits)
    except ValidationError as e:
        raise UsageError(f"invalid limits: {first_error(e)}") from None


def _record(advice: Advice | None, action, fallback: bool, reading: str | None = None) -> AdviceRecord | None:
    if advice is None:
        return None
    if advice.menu == "readings":  # the model's choice is a reading; the strategy's alone is "none"
        ids = [r.id for r in advice.readings]
        return AdviceRecord(target=round(advice.target, 6), recommended="none", options=ids, chosen=reading)
    options = [*advice.choices, *(a for a in advice.actions if a != "make_offer")]
    chosen: str | None = None
    if not fallback:
        if isinstance(action, Accept):
            chosen = "accept"
        elif isinstance(action, WalkAway):
            chosen = "walk_away"
        elif isinstance(action, MakeOffer):
            chosen = advice.choice_of(action.terms) or "own"
    return AdviceRecord(target=round(advice.target, 6), recommended=advice.recommended, options=options, chosen=chosen)
