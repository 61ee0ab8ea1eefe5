"""Batched generation for rollouts: the seller's turns of a step, one ``generate`` call per wave.

It decodes as the local model server does (``negotiator.models.local.engine``): the
action's JSON schema compiled by xgrammar into a per-row token mask (one line, ", " and
": " separators), the model's stop tokens, and sampling with the served model's defaults
(temperature, top-k, top-p from its ``generation_config.json``). It differs in what it
returns: the token ids each row sampled, which GRPO trains on, and it serves one training
step at a time instead of a request queue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
import xgrammar as xgr
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList


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
        self.model, self.tokenizer, self.sampling = model, tokenizer, sampling
        eos = model.generation_config.eos_token_id
        self.stop_ids = list(eos) if isinstance(eos, (list, tuple)) else [eos if eos is not None else tokenizer.eos_token_id]
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_ids[0]
        self.vocab_size = model.config.get_text_config().vocab_size
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=self.vocab_size, stop_token_ids=self.stop_ids)
        self._compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._grammars: dict[str, object] = {}

    def grammar(self, schema: dict | None):
        """The compiled grammar of a JSON schema (None: free text), cached by schema."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = self._compiler.compile_json_schema(json.dumps(schema), any_whitespace=False)
        return self._grammars[key]

    def generate(self, requests: list[Request]) -> list[Generated]:
        n, width = len(requests), max(len(r.prompt_ids) for r in requests)
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for i, r in enumerate(requests):  # left padding: every row's next token is at the end
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids):] = 1
        limit = max(max(1, r.max_new_tokens) for r in requests)
        processors = LogitsProcessorList()
        if any(r.grammar is not None for r in requests):
            processors.append(_Grammars([r.grammar for r in requests], self.vocab_size))
        processors.append(_Sample(self.sampling))
        # use_cache explicitly: a trainer sets model.config.use_cache=False (its training
        # default), and generation would then re-read the whole chat at every token.
        config = GenerationConfig(
            do_sample=False, max_new_tokens=limit, eos_token_id=self.stop_ids, pad_token_id=self.pad_id, use_cache=True
        )
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=config, logits_processor=processors)
        results = []
        for i, r in enumerate(requests):
            new = out[i, width:].tolist()[: max(1, r.max_new_tokens)]
            stop_at = next((k for k, t in enumerate(new) if t in self.stop_ids), None)
            kept = new if stop_at is None else new[:stop_at]
            results.append(Generated(
                text=self.tokenizer.decode(kept, skip_special_tokens=True), token_ids=kept, prompt_tokens=len(r.prompt_ids),
                completion_tokens=len(kept) + (stop_at is not None), finish_reason="length" if stop_at is None else "stop",
            ))
        return results


class _Grammars(LogitsProcessor):
    """Masks each constrained row's logits to the tokens its grammar allows next."""

    def __init__(self, grammars: list, vocab_size: int):
        self.matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self.live = [i for i, m in enumerate(self.matchers) if m is not None]
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.started = False

    def __call__(self, input_ids, scores):
        if self.started:  # feed each live row the token it just got; finished rows drop out
            self.live = [i for i in self.live if self.matchers[i].accept_token(int(input_ids[i, -1])) and not self.matchers[i].is_terminated()]
        self.started = True
        for i in self.live:
            self.matchers[i].fill_next_token_bitmask(self.bitmask, i)
        if self.live:
            xgr.apply_token_bitmask_inplace(scores, self.bitmask, indices=self.live)
        return scores


class _Sample(LogitsProcessor):
    """Samples each row's next token after the grammar mask (temperature, top-k, top-p).

    It leaves only the picked token and ``generate`` runs greedy on that: applying top-k
    before the mask could leave a row with no allowed token, and a draw among the best
    1024 candidates is much cheaper on a CPU than over a 262k vocabulary.
    """

    CANDIDATES = 1024  # without top-k: the rest of the vocabulary carries negligible mass

    def __init__(self, s: Sampling):
        self.s = s

    def __call__(self, input_ids, scores):
        if self.s.temperature <= 1e-5:
            choice = scores.argmax(dim=-1)
        else:
            k = min(scores.shape[-1], self.s.top_k if self.s.top_k > 0 else self.CANDIDATES)
            vals, idx = scores.float().topk(k, dim=-1)
            probs = torch.softmax(vals / self.s.temperature, dim=-1)
            if self.s.top_p < 1.0:  # nucleus: keep tokens whose better tokens hold less than top_p
                keep = (probs.cumsum(-1) - probs) < self.s.top_p
                probs = torch.where(keep, probs, torch.zeros_like(probs))
            probs = torch.nan_to_num(probs, nan=0.0)
            probs[probs.sum(-1) == 0, 0] = 1.0  # a row with nothing allowed (finished) takes its best token
            choice = idx.gather(1, torch.multinomial(probs, 1)).squeeze(1)
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, choice[:, None], 0.0)
        return out
