"""The turn graph (LangGraph): render -> call_model -> parse -> [retry] -> guard.

::

    START -> render -> call_model -> parse --valid--> guard -> END
                           ^            |
                           +--invalid---+   (feedback appended, at most ``max_retries``)
                                        |
                                        +--retries spent--> guard (fallback action)

One compiled graph per process; each turn is one ``ainvoke`` with the agent's
``TurnConfig`` passed in the run config, so agents are cheap to create. It never checkpoints,
not even inside a node of a checkpointed graph. Provider failures are retried
with backoff inside ``call_model``; when they persist the ``ProviderError`` propagates and
the runtime records it on the episode.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from ..actions import (
    ActionParseError,
    action_json_schema,
    parse_text_action,
    parse_tool_call,
    tool_answer,
    tool_definitions,
)
from ..errors import ProviderError
from ..models.base import ChatModel, ModelRequest, ModelResponse
from ..models.seeds import turn_seed
from ..party import AnyAction, Attempt, GuardIntervention, PartyView, Usage
from ..strategy import Advice, Strategy
from . import assist
from .guard import Guard, fallback_action
from .prompt import Mode, render_messages, retry_message

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer


@dataclass
class RetryPolicy:
    """Backoff for transient provider errors (429, 5xx, timeouts)."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    timeout: float | None = 120.0  # per model call

    def delay(self, attempt: int, rng: random.Random) -> float:
        return min(self.max_delay, self.initial_delay * 2**attempt) * (0.5 + rng.random() / 2)


class TurnState(TypedDict, total=False):
    view: PartyView
    advice: Advice | None  # the strategy's advice on this move (assisted seller), else None
    messages: list[dict]
    response: ModelResponse | None
    action: AnyAction | None
    raw: str | None
    attempts: list[Attempt]
    usage: Usage
    guard: GuardIntervention | None
    fallback: bool
    reading: str | None  # the readings menu: what the model read in the other side's words


@dataclass
class TurnConfig:
    model: ChatModel
    mode: Mode
    instructions: str = ""
    max_retries: int = 2
    guard: bool = True
    temperature: float | None = None
    max_tokens: int | None = 256
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    constrain: bool = True  # ask for schema-constrained decoding where the backend supports it
    tracer: Tracer | None = None
    strategy: Strategy | None = None  # the assisted seller: the model chooses among the strategy's options
    seed: int | None = None  # the party's seed: each model call sends a seed derived from it and the turn


_rng = random.Random()


def _cfg(config: RunnableConfig) -> TurnConfig:
    return config["configurable"]["turn"]


def build_turn_graph():
    """Compile the turn graph. Nodes are async so LangGraph runs them on the event loop."""

    async def render(state: TurnState, config: RunnableConfig) -> dict[str, Any]:
        cfg = _cfg(config)
        view = state["view"]
        advice = assist.advice_for(view, cfg.strategy) if cfg.strategy is not None else None
        messages = render_messages(view, cfg.instructions, cfg.mode, cfg.strategy, advice)
        return {"messages": messages, "advice": advice, "attempts": [], "usage": Usage()}

    async def call_model(state: TurnState, config: RunnableConfig) -> dict[str, Any]:
        cfg = _cfg(config)
        view, advice = state["view"], state.get("advice")
        attempt = len(state["attempts"])
        if advice is not None:
            tools = assist.answer_tools(advice, view.space) if cfg.mode == "tools" else None
            schema = assist.answer_schema(advice, view.space)
        else:
            tools = tool_definitions(view.space, _allowed(view)) if cfg.mode == "tools" else None
            schema = action_json_schema(view.space, _allowed(view))
        request = ModelRequest(
            messages=state["messages"],
            tools=tools,
            response_schema=schema if cfg.constrain and cfg.mode == "json" else None,
            temperature=cfg.temperature,
            max_tokens=cfg.max_tokens,
            seed=turn_seed(cfg.seed, view, attempt),
            attempt=attempt,
            view=view,
            advice=advice,
        )
        response = await _complete_with_retries(cfg, request, _rng, cfg.tracer)
        usage = state["usage"].model_copy()
        usage.add(
            Usage(
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                cost_usd=response.cost_usd,
                model_calls=1,
            )
        )
        return {"response": response, "usage": usage, "raw": response.raw()}

    async def parse(state: TurnState, config: RunnableConfig) -> dict[str, Any]:
        cfg = _cfg(config)
        view, response = state["view"], state["response"]
        assert response is not None
        advice = state.get("advice")
        reading = None
        try:
            if advice is None:
                action = _parse(response, view)
            else:
                data = _answer_data(response, advice)
                action = assist.parse_answer(data, advice, view)
                reading = str(data["read"]).strip().lower() if advice.menu == "readings" else None
        except ActionParseError as e:
            attempts = [*state["attempts"], Attempt(raw=response.raw(), error=e.feedback)]
            if len(attempts) > cfg.max_retries:
                return {"attempts": attempts, "action": fallback_action(view, advice), "fallback": True}
            return {
                "attempts": attempts,
                "action": None,
                "messages": state["messages"] + retry_message(response.raw(), e.feedback),
            }
        return {"action": action, "fallback": False, "reading": reading}

    async def guard(state: TurnState, config: RunnableConfig) -> dict[str, Any]:
        cfg = _cfg(config)
        tracer = cfg.tracer
        action = state["action"]
        assert action is not None
        if not cfg.guard:
            return {"guard": None}
        new, intervention = Guard(state["view"], cfg.strategy, state.get("advice"), cfg.instructions).check(action)
        if intervention is not None and tracer is not None:
            from ..tracing import record_guard

            record_guard(tracer, intervention.kinds)
        return {"action": new, "guard": intervention}

    def after_parse(state: TurnState) -> str:
        return "guard" if state["action"] is not None else "call_model"

    g = StateGraph(TurnState)
    g.add_node("render", render)
    g.add_node("call_model", call_model)
    g.add_node("parse", parse)
    g.add_node("guard", guard)
    g.add_edge(START, "render")
    g.add_edge("render", "call_model")
    g.add_edge("call_model", "parse")
    g.add_conditional_edges("parse", after_parse, {"guard": "guard", "call_model": "call_model"})
    g.add_edge("guard", END)
    # One turn is one step of whatever runs it: called from a node of an app's own graph, it must not
    # inherit that graph's checkpointer as a subgraph would (checkpoints of its internals, the seller's
    # private view among them, in the app's store, read back on every resume).
    return g.compile(checkpointer=False)


_GRAPH = None


def turn_graph():
    """The process-wide compiled turn graph."""
    global _GRAPH
    if _GRAPH is None:
        _GRAPH = build_turn_graph()
    return _GRAPH


def _allowed(view: PartyView) -> tuple[str, ...]:
    """Accept is only offered when there is something to accept."""
    return ("make_offer", "accept", "walk_away") if view.standing_offer is not None else ("make_offer", "walk_away")


def _parse(response: ModelResponse, view: PartyView) -> AnyAction:
    if response.tool_calls:
        if len(response.tool_calls) > 1:
            raise ActionParseError("Call exactly one tool per turn.")
        call = response.tool_calls[0]
        action = parse_tool_call(call.name, call.arguments, view.space)
    else:
        action = parse_text_action(response.text or "", view.space)
    if action.action == "accept" and view.standing_offer is None:
        raise ActionParseError("There is no offer from the other side to accept yet; make an offer instead.")
    return action


def _answer_data(response: ModelResponse, advice: Advice) -> dict[str, Any]:
    if response.tool_calls:
        if len(response.tool_calls) > 1:
            raise ActionParseError("Call exactly one tool per turn.")
        call = response.tool_calls[0]
        return tool_answer(call.name, call.arguments)
    return assist.read_answer(response.text or "", advice)


async def _complete_with_retries(
    cfg: TurnConfig, request: ModelRequest, rng: random.Random, tracer: Tracer | None
) -> ModelResponse:
    from ..tracing import model_span

    policy = cfg.retry
    for attempt in range(policy.max_retries + 1):
        with model_span(tracer, cfg.model, request) as record:
            try:
                if policy.timeout:
                    response = await asyncio.wait_for(cfg.model.complete(request), policy.timeout)
                else:
                    response = await cfg.model.complete(request)
            except TimeoutError:
                err = ProviderError(f"model call timed out after {policy.timeout:g}s", transient=True)
                record(error=err)
            except ProviderError as e:
                err = e
                record(error=err)
            else:
                record(response=response)
                return response
        if not err.transient or attempt == policy.max_retries:
            raise err
        await asyncio.sleep(policy.delay(attempt, rng))
    raise AssertionError("unreachable")
