"""Per-row sampling after the grammar mask: temperature, top-k, top-p, and a seed per request.

On a CPU every tensor op costs a thread wake-up (milliseconds when the cores are busy) and
every pass over Gemma's 262k vocabulary costs milliseconds too, so this makes one pass
(top-k, or top-1024 without a top-k) and draws among those candidates in plain Python. A
seeded request draws from its own ``random.Random(seed)``: one number per sampled token,
whatever the other rows of the batch do.
"""

from __future__ import annotations

import math
import random

import torch

from .interface import Sampling

CANDIDATES = 1024  # without top-k, draw among the best 1024 tokens (the rest carry negligible mass)
_rng = random.Random()


class RowSampling:
    """Picks each sampling row's next token; the decode loop then takes the argmax: a greedy
    row is left as it is, and a sampling row gets +inf on the token drawn here."""

    def __init__(self, settings: list[Sampling]):
        rows = [i for i, s in enumerate(settings) if s.temperature > 1e-5]
        self.index = {i: j for j, i in enumerate(rows)}  # request index -> position in settings
        self.settings = [settings[i] for i in rows]
        self.rngs = [random.Random(s.seed) if s.seed is not None else _rng for s in self.settings]

    def __call__(self, live: list[int], scores: torch.Tensor) -> torch.Tensor:
        rows = [row for row, i in enumerate(live) if i in self.index]
        if not rows:
            return scores
        picked = [self.index[live[row]] for row in rows]
        sub = scores if len(rows) == scores.shape[0] else scores[rows]
        k = min(scores.shape[-1], max(self.settings[j].top_k or CANDIDATES for j in picked))
        vals, idx = sub.topk(k, dim=-1)
        tokens = [
            draw(v, c, self.settings[j], self.rngs[j])
            for v, c, j in zip(vals.tolist(), idx.tolist(), picked, strict=False)
        ]
        scores[rows, tokens] = float("inf")
        return scores


def draw(logits: list[float], ids: list[int], s: Sampling, rng: random.Random) -> int:
    """One token from sorted candidate logits: temperature, then top-k, then top-p."""
    if s.top_k > 0:
        logits, ids = logits[: s.top_k], ids[: s.top_k]
    best = logits[0]
    weights = [math.exp((x - best) / s.temperature) if x != float("-inf") else 0.0 for x in logits]
    total, mass, n = sum(weights), 0.0, 0
    for w in weights:  # the smallest prefix holding top_p of the mass (at least one token)
        if n and (w == 0.0 or mass >= s.top_p * total):
            break
        mass, n = mass + w, n + 1
    r = rng.random() * mass
    for w, token in zip(weights[:n], ids[:n], strict=False):
        r -= w
        if r <= 0:
            return token
    return ids[n - 1]
