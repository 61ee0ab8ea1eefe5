"""Parties from outside the package: ``module:factory`` specs and the ``negotiator.parties`` entry points.

A plugin party is built by a *factory*, any callable that returns an object with an
``act(view)`` method (async or not) returning a ``TurnRecord`` or a bare action. The factory
is called with keyword arguments only: ``role`` ("seller" or "buyer"), ``seed`` (the
negotiation's seed) and the spec's ``?key=value`` parameters, as strings. It is called once
per negotiation, so a party may keep per-negotiation state (``view.negotiation_id`` names it).

Two ways to name a factory in a spec:

* ``pkg.module:factory`` (the current directory is importable, as with ``uvicorn main:app``);
* a name an installed distribution registers in the entry-point group ``negotiator.parties``::

      [project.entry-points."negotiator.parties"]
      "mylib/aspiration" = "mylib.parties:aspiration"

  and then ``--buyer mylib/aspiration``. A registered name takes precedence over reading the
  spec as a LiteLLM model; ``rule/``, ``scripted/``, ``local/`` and the protocol specs cannot be
  registered over.

The runtime wraps what the factory returns in a ``PluginParty``: its ``spec`` is the spec
string (what episodes, ids and reports name), ``aclose`` and ``on_end`` are optional, and a
return value that is neither a ``TurnRecord`` nor an action ends the negotiation as an error
episode that says so.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from .actions import Accept, MakeOffer, WalkAway
from .errors import UsageError, first_error

ENTRY_POINT_GROUP = "negotiator.parties"
# pkg.module:factory (dotted attribute allowed: pkg.module:Class.build); no '/' so a LiteLLM model never reads as one.
FACTORY_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
MOVE_TIMEOUT = 120.0  # seconds an async act() may take over one move, as long as a model call may
_RESERVED_PREFIXES = ("rule/", "scripted/", "local/", "mcp+", "a2a+")  # and the name "human"


def _reserved(name: str) -> bool:
    return name == "human" or name.startswith(_RESERVED_PREFIXES)


def _entry_points() -> Any:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


@functools.cache
def registered() -> dict[str, Any]:
    """Party names registered by installed distributions: name -> entry point (read once per process)."""
    return {ep.name: ep for ep in _entry_points() if not _reserved(ep.name)}


def reserved_name_hint(spec: str) -> str:
    """What to tell the author of a package that registers a built-in name (``rule/mine``,
    ``human``) which ``spec`` asked for: the registration is not used. Empty when none does
    (read on an error's path only: it looks at the entry points again)."""
    base = spec.strip().partition("?")[0]
    for ep in _entry_points():
        if ep.name == base and _reserved(ep.name):
            dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
            return (
                f"{dist} registers {base!r} ({ep.value}) as a party, but rule/, scripted/, local/, mcp+, a2a+ and "
                f"human are negotiator's own: register it under a name of the package's own (mylib/...)"
            )
    return ""


def with_reserved_hint(e: UsageError, spec: object) -> UsageError:
    """``e``, told once (``make_party`` may run inside ``check_spec``) why a registration of the
    built-in name ``spec`` asked for does nothing (``reserved_name_hint``)."""
    hint = reserved_name_hint(spec) if isinstance(spec, str) else ""
    return UsageError(f"{e}. {hint}") if hint and hint not in str(e) else e


def is_plugin_name(base: str) -> bool:
    """Whether a spec (without its ``?`` parameters) names a plugin party."""
    return bool(FACTORY_PATH.match(base)) or base in registered()


def load_factory(name: str) -> Callable[..., Any]:
    """The factory a plugin spec names; a UsageError that says what is wrong when it cannot be loaded."""
    ep = registered().get(name)
    target = ep.value if ep is not None else name
    where = f"entry point {name!r} ({target}, group {ENTRY_POINT_GROUP})" if ep is not None else repr(name)
    module_name, _, attr = target.partition(":")
    if ep is None and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # module:factory from the current directory, as `python -m` would find it
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is None or not (module_name == e.name or module_name.startswith(e.name + ".")):
            raise UsageError(_raised_on_import(where, module_name, e)) from None  # a module it imports is missing
        raise UsageError(
            f"party {where}: cannot import {module_name} ({type(e).__name__}: {e}); "
            "is it installed, or in the current directory?"
        ) from None
    except Exception as e:  # the module itself failing on import
        raise UsageError(_raised_on_import(where, module_name, e)) from None
    for part in attr.split(".") if attr else []:
        if not hasattr(obj, part):
            raise UsageError(f"party {where}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"party {where}: {target} is a {type(obj).__name__}, not a callable that returns a party")
    return obj


def _raised_on_import(where: str, module_name: str, e: Exception) -> str:
    return (
        f"party {where}: importing {module_name} raised {type(e).__name__}: {e}; fix the module or install "
        f"what it needs (python -c 'import {module_name}' shows where)"
    )


def make_plugin_party(spec: str, name: str, params: dict[str, str], role: str, seed: int = 0) -> PluginParty:
    """Call the factory of ``name`` and wrap the party it returns."""
    factory = load_factory(name)
    taken = [k for k in ("role", "seed") if k in params]
    if taken:
        raise UsageError(
            f"party {spec}: ?{taken[0]}= is not the spec's to give: negotiator passes every factory role= "
            "(the side it plays) and seed= (the negotiation's seed) itself; give the parameter another name"
        )
    try:
        inspect.signature(factory).bind(role=role, seed=seed, **params)
    except TypeError as e:
        names = ", ".join(f"{k}=..." for k in ("role", "seed", *params))
        raise UsageError(f"party {spec}: its factory does not take ({names}) as keyword arguments ({e})") from None
    except ValueError:  # a callable without a signature Python can read: calling it will tell
        pass
    try:
        inner = factory(role=role, seed=seed, **params)
    except UsageError:
        raise
    except Exception as e:
        hint = " (spec parameters arrive as strings: convert them in the factory)" if params else ""
        raise UsageError(f"party {spec}: its factory raised {type(e).__name__}: {e}{hint}") from None
    if not callable(getattr(inner, "act", None)):
        raise UsageError(
            f"party {spec}: its factory returned {type(inner).__name__}, which has no act(view) method; "
            "return an object with act(view) -> TurnRecord (see docs/plugins.md)"
        )
    inner_role = getattr(inner, "role", role)
    if inner_role != role:
        raise UsageError(f"party {spec}: asked for a {role}, its factory returned a {inner_role}")
    return PluginParty(inner, spec, role)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class PluginParty:
    """A party from a plugin factory, as the runtime plays it."""

    def __init__(self, inner: Any, spec: str, role: str):
        self.inner, self.spec, self.role = inner, spec, role
        self.family = getattr(inner, "family", None) or "plugin"
        seconds = getattr(inner, "move_timeout", MOVE_TIMEOUT)
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or seconds <= 0
        ):  # each negotiation would end at once in a TimeoutError (nan, 0, -1) or a TypeError ('30')
            raise UsageError(
                f"party {spec}: move_timeout must be a positive number of seconds, or None to wait for ever, "
                f"not {seconds!r}"
            )
        self.move_timeout: float | None = seconds

    @property
    def config(self):  # an LLM-backed plugin's model config, for the runner's rate limiter
        return getattr(self.inner, "config", None)

    async def act(self, view):
        from .party import TurnRecord

        deadline = None
        try:
            result = self.inner.act(view)
            if inspect.isawaitable(result):
                async with asyncio.timeout(self.move_timeout) as deadline:
                    result = await result
        except TimeoutError:
            if deadline is None or not deadline.expired():
                raise  # its own, from inside act
            raise TimeoutError(
                f"{self.spec}: act() did not answer within {self.move_timeout:g} s; make the move faster, or give "
                "the party a move_timeout attribute (seconds; None waits for ever)"
            ) from None
        except ValidationError as e:  # it built an action pydantic refuses: terms with nan, an unknown action
            raise ValueError(f"{self.spec}: act() built an invalid action: {first_error(e)}") from None
        if isinstance(result, (MakeOffer, Accept, WalkAway)):
            return TurnRecord(action=result)
        if not isinstance(result, TurnRecord):
            raise TypeError(
                f"{self.spec}: act() returned {type(result).__name__}; return a TurnRecord or an action "
                "(MakeOffer, Accept, WalkAway)"
            )
        return result

    async def on_end(self, outcome) -> None:
        hook = getattr(self.inner, "on_end", None)
        if hook is not None:
            await _maybe_await(hook(outcome))

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None) or getattr(self.inner, "close", None)
        if close is not None:
            await _maybe_await(close())


__all__ = [
    "ENTRY_POINT_GROUP",
    "FACTORY_PATH",
    "MOVE_TIMEOUT",
    "PluginParty",
    "is_plugin_name",
    "load_factory",
    "make_plugin_party",
    "registered",
    "reserved_name_hint",
    "with_reserved_hint",
]
