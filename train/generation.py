"""Batched generation for rollouts: the seller's turns of a step, one ``generate`` call per wave.

It is the local model server's decode loop (:class:`negotiator.models.local.engine.Engine`),
called directly instead of through the server's request queue: the action's JSON schema
compiled by xgrammar into a per-row token mask (one line, ", " and ": " separators),
jump-forward through the tokens the grammar forces, rows leaving the batch as they stop,
the model's stop tokens, and sampling with the served model's defaults (temperature, top-k,
top-p from its ``generation_config.json``). So the policy being trained writes its turns
exactly as the deployed seller will, and generation costs what serving costs. What training
adds: the token ids each row wrote (GRPO trains on them) and per-row sampling seeds drawn
from torch's generator, which the trainer seeds and restores on resume.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from negotiator.models.local.engine import Engine, GenRequest
from negotiator.models.local.engine import Sampling as RowSampling


@dataclass
class Request:
    prompt_ids: list[int]
    max_new_tokens: int
    grammar: object = None  # an xgrammar CompiledGrammar, or None for free text


@dataclass
class Generated:
    """One row's answer: the text, and the token ids the policy sampled (stop token excluded)."""

    text: str
    token_ids: list[int]
    prompt_tokens: int
    completion_tokens: int  # stop token included
    finish_reason: str  # "stop" or "length"


@dataclass(frozen=True)
class Sampling:
    temperature: float = 1.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0


class RolloutEngine:
    def __init__(self, model, tokenizer, sampling: Sampling = Sampling()):
        self.sampling = sampling
        self._engine = Engine(model, tokenizer, worker=False)

    def grammar(self, schema: dict | None):
        """The compiled grammar of a JSON schema (None: free text), cached by schema."""
        return None if schema is None else self._engine.grammar(schema)

    def generate(self, requests: list[Request]) -> list[Generated]:
        s = self.sampling
        seeds = torch.randint(0, 2**62, (len(requests),)).tolist()  # reproducible under the trainer's seed
        rows = [
            GenRequest(r.prompt_ids, r.max_new_tokens, RowSampling(s.temperature, s.top_p, s.top_k, seed), r.grammar)
            for r, seed in zip(requests, seeds)
        ]
        return [
            Generated(g.text, g.token_ids, g.prompt_tokens, g.completion_tokens, g.finish_reason)
            for g in self._engine.generate(rows)
        ]
