"""Sampling seeds per turn: the same negotiation state draws the same random numbers.

A party built with a seed (``make_party(..., seed=)``: the episode's seed in evaluations,
one per negotiation of a GRPO group in training) sends every model call the OpenAI
``seed`` field, derived from that seed and the turn: the scenario, the transcript so far,
the turn index and the retry attempt. The local server and vLLM honour it per request, so
a rerun of a command, at any concurrency, writes the same episodes, and two seller arms
playing the same negotiation meet the same random numbers until their moves differ.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..party import PartyView

SEED_BITS = 31  # seeds stay in the range every provider's ``seed`` field takes


def turn_seed(party_seed: int | None, view: PartyView, attempt: int = 0) -> int | None:
    """The ``seed`` of one model call of a party on its turn in ``view`` (None: unseeded)."""
    if party_seed is None:
        return None
    state = {
        "party_seed": party_seed,
        "role": view.role,
        "scenario": view.scenario.id,
        "turn": view.turn,
        "transcript": [m.model_dump(mode="json") for m in view.transcript],
        "attempt": attempt,
    }
    digest = hashlib.blake2b(json.dumps(state, sort_keys=True).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - SEED_BITS)


def seed_of(text: str) -> int:
    """A party seed from a name (a training row's episode id)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> (64 - SEED_BITS)
