"""JSON-schema grammars (xgrammar, the engine vLLM uses for structured outputs): compiled once
per schema, and applied per row as a token mask before sampling."""

from __future__ import annotations

import json
import threading
from typing import Any

import torch
import xgrammar as xgr

_CACHE_SIZE = 256


class Grammars:
    """Compiles and caches the grammar of each JSON schema for one tokenizer."""

    def __init__(self, tokenizer, vocab_size: int, stop_ids: list[int]):
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=stop_ids)
        self._compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, schema: dict | None) -> Any:
        """The compiled grammar of ``schema``; None (free text) for None."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            g = self._cache.get(key)
            if g is None:
                # One line, ", " and ": " separators: the JSON shape the prompt shows.
                g = self._compiler.compile_json_schema(json.dumps(schema), any_whitespace=False)
                if len(self._cache) >= _CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = g
            return g


class RowGrammars:
    """Per-request grammar matchers; masks each live constrained row to the tokens allowed next."""

    def __init__(self, grammars: list[Any], vocab_size: int):
        self.matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self.any = any(m is not None for m in self.matchers)
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size) if self.any else None

    def __call__(self, live: list[int], scores: torch.Tensor) -> torch.Tensor:
        if not self.any:
            return scores
        matchers = [(row, self.matchers[i]) for row, i in enumerate(live)]
        live_matchers = [(row, m) for row, m in matchers if m is not None and not m.is_terminated()]
        rows = [row for row, _ in live_matchers]
        if rows:
            assert self.bitmask is not None  # allocated whenever any row is constrained
            for row, matcher in live_matchers:
                matcher.fill_next_token_bitmask(self.bitmask, row)
            xgr.apply_token_bitmask_inplace(scores, self.bitmask[: len(live)], indices=rows)
        return scores

    def accept(self, live: list[int], tokens: list[int]) -> None:
        for i, t in zip(live, tokens, strict=False):
            m = self.matchers[i]
            if m is not None and not m.is_terminated():
                m.accept_token(t)

    def forced(self, i: int, room: int, tokenizer) -> list[int]:
        """The tokens request ``i``'s grammar forces next (at most ``room``), already accepted."""
        m = self.matchers[i]
        if m is None or room <= 0 or m.is_terminated():
            return []
        text = m.find_jump_forward_string()
        if not text:
            return []
        forced = []
        for t in tokenizer(text, add_special_tokens=False)["input_ids"][:room]:
            if not m.accept_token(t):  # cannot happen for an exact forced string; stop jumping if it does
                break
            forced.append(t)
        return forced
