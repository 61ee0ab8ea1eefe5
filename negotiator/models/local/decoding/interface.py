"""What a generation backend is asked and what it answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

JSON_OBJECT: dict = {"type": "object"}
"""The schema of OpenAI's ``response_format: {"type": "json_object"}``: any JSON object."""


@dataclass(frozen=True)
class Sampling:
    """How one request draws its tokens (applied after the grammar mask)."""

    temperature: float = 1.0  # 0: greedy
    top_p: float = 1.0
    top_k: int = 0  # 0: off
    seed: int | None = None  # a seeded request draws the same tokens from the same logits, in any batch


def sampling_defaults(folder: str | Path) -> Sampling:
    """A model folder's sampling defaults, from its ``generation_config.json`` (as vLLM reads
    them): what the server uses when a request leaves a setting out, and what rollouts use."""
    try:
        gc = json.loads((Path(folder) / "generation_config.json").read_text())
    except (OSError, ValueError):
        return Sampling()
    if gc.get("do_sample") is False:
        return Sampling(temperature=0.0)
    base = Sampling()
    return Sampling(
        temperature=float(gc.get("temperature") if gc.get("temperature") is not None else base.temperature),
        top_p=float(gc.get("top_p") if gc.get("top_p") is not None else base.top_p),
        top_k=int(gc.get("top_k") or 0),
    )


@dataclass
class Request:
    prompt_ids: list[int]
    max_new_tokens: int
    sampling: Sampling = field(default_factory=Sampling)
    grammar: Any = None  # what ``Engine.grammar(schema)`` returned; None: free text


@dataclass
class Decoded:
    """One request's answer."""

    text: str  # the answer, stop token excluded
    token_ids: list[int]  # the tokens the model wrote, stop token excluded (what GRPO trains on)
    prompt_tokens: int
    completion_tokens: int  # stop token included
    finish_reason: str  # "stop" or "length"
    cached_tokens: int = 0  # prompt tokens whose keys and values came from the prefix cache


@runtime_checkable
class Engine(Protocol):
    """A generation backend: the local :class:`~.decoder.Decoder`, or vLLM in training."""

    stop_ids: list[int]

    def grammar(self, schema: dict | None) -> Any:
        """What ``Request.grammar`` takes for answers constrained to ``schema`` (None: free text)."""
        ...

    def generate(self, requests: Sequence[Request]) -> list[Decoded]:
        """Answer ``requests`` together (one batch where the backend batches), in order."""
        ...
