"""Party specs: one string picks any seller or buyer.

=================================  ===========================================================
``rule/<strategy>[?k=v]``          a rule-based tactic (boulware, linear, conceder, ...)
``scripted/<name>[?k=v]``          a scripted test model behind the real agent pipeline
``local/gemma-3-270m``             the embedded local model, served on loopback
``local/PATH``                     a local transformers folder or LoRA adapter (from training)
``human``                          a person at the terminal (``negotiator play``)
``pkg.module:factory``             a party built by your own factory (docs/plugins.md)
``NAME``                           a party an installed package registers (entry points ``negotiator.parties``)
``mcp+http://HOST:PORT/mcp``       a seller served elsewhere, reached over MCP (the eval's ``--seller``)
``a2a+http://HOST:PORT``           a seller served elsewhere, reached over A2A (its agent card's base URL)
anything else                      a LiteLLM model string: ``openai/gpt-4o-mini``,
                                   ``anthropic/claude-...``, ``hosted_vllm/MODEL`` + base URL
=================================  ===========================================================

Parameters after ``?`` configure the party, e.g. ``rule/boulware?e=0.2`` or
``scripted/boulware?latency=0.1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qsl, urlencode

from ..errors import UsageError

SpecKind = Literal["rule", "scripted", "local", "human", "litellm", "mcp", "a2a", "plugin"]
REMOTE_SCHEMES = ("mcp+http://", "mcp+https://", "a2a+http://", "a2a+https://")


@dataclass(frozen=True)
class Spec:
    raw: str
    kind: SpecKind
    name: str
    params: dict[str, str] = field(default_factory=dict)


# Spec parameters that configure the seller's strategy, not its model
# (negotiator.agent.seller takes them off before the model is built).
STRATEGY_KEYS = (
    "strategy",
    "exponent",
    "aspiration",
    "leeway",
    "candidates",
    "own_terms",
    "walk_away",
    "lead",  # the responsive strategy's parts
    "rho",
    "slack",
    "big_step",
    "hurry",
    "reader",
    "opponent",
    "menu",  # what the model chooses among: offers of equal worth, or the priced moves
    "words",  # who writes the message: the model, or the strategy's own sentence (the model decides only)
    "window",  # bidding and acceptance, as a Strategy object sets them (docs/strategy.md)
    "similarity",
    "combi",
    "level",  # the hardliner's
    "step",  # MiCRO's
    "custom",  # a recorded name's fingerprint of a Strategy object no spec can write (refused as a setting)
)


def parse_spec(spec: str) -> Spec:
    """Split a spec into kind, name and parameters. Raises UsageError with a hint."""
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError("empty model spec; try rule/boulware, local/gemma-3-270m or openai/gpt-4o-mini")
    s = spec.strip()
    base, _, query = s.partition("?")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise UsageError(f"bad parameters in spec {spec!r}: write them as ?key=value&key2=value2") from None
    params = dict(pairs)
    if len(params) < len(pairs):  # the last would win without a word: ?temperature=0&temperature=1
        twice = sorted({k for k, _ in pairs if sum(1 for j, _ in pairs if j == k) > 1})
        raise UsageError(f"spec {spec!r} gives {', '.join(twice)} more than once: give each setting once")
    secrets = [k for k in params if is_secret_name(k)]
    if secrets:  # named, never echoed: the value is a credential
        raise UsageError(
            f"{base}: ?{secrets[0]}= puts a credential in the spec, which runs write into every episode; set it "
            "in the environment (OPENAI_API_KEY ..., NEGOTIATOR_MODEL_API_KEY for a server at a base URL)"
        )
    if base == "human":
        return Spec(s, "human", "human", params)
    if base.startswith(REMOTE_SCHEMES):  # name: the plain http(s) URL of the remote service
        protocol, _, url = base.partition("+")
        return Spec(s, protocol, url, params)  # type: ignore[arg-type]
    prefix, slash, rest = base.partition("/")
    if prefix in ("rule", "scripted", "local"):
        if not slash or not rest:
            raise UsageError(f"spec {spec!r} needs a name after '{prefix}/', e.g. {prefix}/{_EXAMPLE[prefix]}")
        return Spec(s, prefix, rest, params)  # type: ignore[arg-type]
    from ..plugins import is_plugin_name  # before LiteLLM: a registered name is not a model

    if is_plugin_name(base):
        return Spec(s, "plugin", base, params)
    if not slash:
        raise UsageError(
            f"unknown model spec {spec!r}: use rule/<strategy>, scripted/<name>, local/<model or path>, "
            "a LiteLLM model string with a provider prefix such as openai/gpt-4o-mini or hosted_vllm/<model>, "
            "or your own party as pkg.module:factory"
        )
    return Spec(s, "litellm", base, params)


def is_secret_name(name: str) -> bool:
    """Whether a spec parameter names a credential (``api_key``, ``aws_secret_access_key``, ``azure_ad_token``
    ...), which LiteLLM would take from the spec as readily as from the environment."""
    n = name.lower()
    return (
        n in ("key", "token", "secret", "password")
        or n.endswith(("api_key", "_secret", "secret_key", "access_key", "_token", "password"))
        or "credential" in n
    )


def refuse_unknown(what: str, given, known) -> None:
    """A UsageError naming the settings of ``given`` that ``what`` (``rule/boulware``, ``mcp+ specs``)
    does not take, with the ones it does."""
    unknown = [k for k in given if k not in known]
    if unknown:
        raise UsageError(f"unknown parameters for {what}: {', '.join(unknown)}; known: {', '.join(known)}")


def with_params(spec: str, params: Mapping[str, object]) -> str:
    """``spec`` with ``params`` set (replacing its own values of those keys, the rest kept in order):
    ``with_params("local/m?temperature=0", {"temperature": 2})`` is ``local/m?temperature=2``."""
    base, _, query = spec.partition("?")
    merged = {**dict(parse_qsl(query, keep_blank_values=True)), **{k: _text(v) for k, v in params.items()}}
    return f"{base}?{urlencode(merged)}" if merged else base


def _text(v: object) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))  # --temperature 2 writes temperature=2, as a person would
    return repr(v) if isinstance(v, float) else str(v)


_EXAMPLE = {"rule": "boulware", "scripted": "boulware", "local": "gemma-3-270m"}


def coerce_param(v: str) -> int | float | bool | str:
    """A spec parameter's value as the model options take it: a number, a boolean or the text."""
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


# What each sampling setting may be, from a spec (``?temperature=``) or a command-line flag
# (``--temperature``): a sampler given nan or inf, or a negative temperature, answers at random
# or silently greedily.
_RANGES = {
    "temperature": ("a number 0 or above (0 = greedy; 1 = the model's own)", lambda v: v >= 0),
    "top_p": ("a number above 0 and at most 1", lambda v: 0 < v <= 1),
    "top_k": ("a whole number 0 or above (0 = no cut)", lambda v: v >= 0 and float(v).is_integer()),
    "max_tokens": ("a number of tokens, at least 1", lambda v: v >= 1 and float(v).is_integer()),
    "seed": ("a whole number", lambda v: float(v).is_integer()),
}


def check_generation(params: dict, named: Callable[[str, object], str]) -> None:
    """A UsageError for the first sampling setting of ``params`` that is not a finite number in
    its range; ``named(key, value)`` says where it was given."""
    for key, (what, ok) in _RANGES.items():
        v = params.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not ok(v):
            raise UsageError(f"{named(key, v)} give {what}")
