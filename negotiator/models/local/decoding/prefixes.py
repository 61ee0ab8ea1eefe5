"""Reusing what the model has already read: the keys and values of earlier chats.

A negotiation's chat grows append-only: a seller's prompt at turn t is its prompt at turn
t-1, its answer, and the buyer's reply. Without a cache every turn reads the whole chat
again: about 1,150 tokens by the sixth turn of an assisted seller, most of a turn's time
on a CPU. The decoder keeps each finished row's keys and values under the token ids they
were computed from, and starts a new request from the longest stored prefix of its prompt,
reading only the rest (vLLM's automatic prefix caching does the same, per block).

* Only a chat's own continuation reuses an entry: the new prompt must hold the entry's
  whole prompt (but for ``slack`` tokens where the template's last token may merge with
  the answer's first), not merely share the system turn and listing with another
  negotiation. Which entry a request reuses so depends on its chat alone, never on what
  ran beside it.
* A longer chat replaces the entries it extends, so a live negotiation holds one entry;
  past ``max_tokens`` the least recently used entries go first.
* The last prompt token is always read again: its logits start the answer.
* A reused prefix gives keys and values equal to a fresh read up to floating-point
  rounding (a prompt read in one pass and a chat built turn by turn sum in different
  orders), so a sampled answer can differ in the rare token whose logits nearly tie.
  Reuse follows each chat's own history, not the batch it ran in, so an evaluation's
  episodes do not depend on its concurrency while the cache holds its live negotiations.
* Only for fixed weights: training changes them between steps, so each step's rollouts
  get a cache of their own, dropped when the step's generation ends
  (:meth:`~.decoder.Decoder.fixed_weights`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import torch


@dataclass
class Entry:
    tokens: list[int]  # what the keys and values were computed from: the prompt, then the answer read so far
    prompt: int  # how many of them were the request's prompt
    keys: list[torch.Tensor]  # per layer: (kv heads, >= len(tokens), head dim)
    values: list[torch.Tensor]


@dataclass
class PrefixStats:
    requests: int = 0
    hits: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens not read again


@dataclass
class PrefixCache:
    max_tokens: int = 32_768  # about 1.2 GB of keys and values for Gemma 3 270M in float32
    min_reuse: int = 16  # shorter chats are read again
    slack: int = 4
    stats: PrefixStats = field(default_factory=PrefixStats)
    _entries: OrderedDict[int, Entry] = field(default_factory=OrderedDict)
    _ids: int = 0
    _stored: int = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def stored_tokens(self) -> int:
        return self._stored

    def longest(self, prompt: list[int]) -> tuple[Entry | None, int]:
        """The entry sharing the longest prefix with ``prompt``, and that prefix's length
        (never the whole prompt); (None, 0) below ``min_reuse`` tokens."""
        self.stats.requests += 1
        self.stats.prompt_tokens += len(prompt)
        best, best_key, n = None, None, 0
        for key, entry in self._entries.items():
            m = _common_prefix(entry.tokens, prompt, len(prompt) - 1)
            if m > n and m >= entry.prompt - self.slack:
                best, best_key, n = entry, key, m
        if best is None or best_key is None or n < self.min_reuse:
            return None, 0
        self._entries.move_to_end(best_key)
        self.stats.hits += 1
        self.stats.reused_tokens += n
        return best, n

    def put(self, tokens: list[int], prompt: int, keys: list[torch.Tensor], values: list[torch.Tensor]) -> None:
        if len(tokens) < self.min_reuse or len(tokens) > self.max_tokens:
            return
        for key in [k for k, e in self._entries.items() if self._continues(tokens, e)]:
            self._remove(key)  # the same chat, further on: the new entry serves whatever the old one would
        self._entries[self._ids] = Entry(tokens, prompt, keys, values)
        self._ids += 1
        self._stored += len(tokens)
        while self._stored > self.max_tokens:
            self._remove(next(iter(self._entries)))

    def _continues(self, tokens: list[int], entry: Entry) -> bool:
        return (
            len(tokens) >= len(entry.tokens)
            and _common_prefix(entry.tokens, tokens, len(tokens)) >= entry.prompt - self.slack
        )

    def clear(self) -> None:
        self._entries.clear()
        self._stored = 0

    def _remove(self, key: int) -> None:
        self._stored -= len(self._entries.pop(key).tokens)


def _common_prefix(a: list[int], b: list[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    if a[:n] == b[:n]:  # the usual case, compared in C: the prompt extends the entry
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo
