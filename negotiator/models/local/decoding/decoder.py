"""The local decode loop: batched, grammar-constrained, per-row sampling, batch-invariant.

One forward pass per step for every live row of the batch. Two things make it faster than
``model.generate`` on a CPU (benchmarks/local_throughput.py, benchmarks/train_rollout.py):

* jump-forward: where a row's grammar allows exactly one continuation (the keys, quotes and
  braces of the JSON: about two thirds of a make_offer answer), those tokens are appended
  without decoding them one by one; the next pass reads them at once;
* a pass packs every row's new tokens into one sequence: a row decoding one token does not
  pay for another row's forced chunk or longer prompt (as padding to the widest would);
* a row leaves the batch the moment it stops;
* with a :class:`~.prefixes.PrefixCache` (the server's, or one training step's: see
  :meth:`Decoder.fixed_weights`), a request that continues an earlier chat reads only what
  is new since that chat's last turn.

Each row attends over its own keys only (:mod:`.attention`), so a seeded request writes the
same tokens alone or in any batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch

from .attention import Pass, RowKV, invariant_count, row_attention
from .grammar import Grammars, RowGrammars
from .interface import Decoded, Request
from .prefixes import PrefixCache
from .sampling import RowSampling
from .tokens import chat_ids, stop_ids


class Decoder:
    """An :class:`~.interface.Engine` on a transformers causal LM (plain, or wrapped by peft)."""

    def __init__(self, model, tokenizer, prefix_cache: PrefixCache | None = None):
        self.model, self.tokenizer = model, tokenizer
        self.prefix_cache = (
            prefix_cache  # None: every prompt is read in full (training, between steps: the weights change)
        )
        self.stop_ids = stop_ids(model, tokenizer)
        self._stops = set(self.stop_ids)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_ids[0]
        self.vocab_size = model.config.get_text_config().vocab_size  # the width of the logits
        self._grammars = Grammars(tokenizer, self.vocab_size, self.stop_ids)

    @contextmanager
    def fixed_weights(self, max_tokens: int = 32_768) -> Iterator[None]:
        """A fresh prefix cache for a block in which the weights do not change (one GRPO
        step's rollouts: every turn of a negotiation then reads only its new tokens), dropped
        after it, since the keys and values it holds belong to these weights only."""
        before, self.prefix_cache = self.prefix_cache, PrefixCache(max_tokens=max_tokens)
        try:
            yield
        finally:
            self.prefix_cache = before

    def grammar(self, schema: dict | None):
        return self._grammars(schema)

    def prompt_ids(self, messages: list[dict]) -> list[int]:
        """Token ids of a chat; ValueError when the chat template refuses it."""
        return chat_ids(self.tokenizer, messages)

    def generate(self, requests: Sequence[Request]) -> list[Decoded]:
        n = len(requests)
        limits = [max(1, r.max_new_tokens) for r in requests]
        kv = RowKV(capacity={i: len(r.prompt_ids) + limits[i] for i, r in enumerate(requests)})
        grammars = RowGrammars([r.grammar for r in requests], self.vocab_size)
        sampling = RowSampling([r.sampling for r in requests])
        out: list[list[int]] = [[] for _ in requests]
        finish = ["length"] * n
        live = list(range(n))  # request index of each row still in the batch
        chunks = [list(r.prompt_ids) for r in requests]  # what each live row reads next
        cached = [self._reuse(kv, i, r.prompt_ids, chunks) for i, r in enumerate(requests)]
        with torch.inference_mode(), row_attention(self.model):
            while live:
                logits = self._forward(kv, live, chunks)
                tokens = sampling(live, grammars(live, logits)).argmax(dim=-1).tolist()
                grammars.accept(live, tokens)
                still, chunks = [], []
                for i, t in zip(live, tokens, strict=False):
                    out[i].append(t)
                    forced = [] if t in self._stops else grammars.forced(i, limits[i] - len(out[i]), self.tokenizer)
                    out[i] += forced
                    if t in self._stops:
                        finish[i] = "stop"
                    if t in self._stops or len(out[i]) >= limits[i]:
                        self._keep(kv, i, requests[i].prompt_ids, out[i])
                        kv.drop(i)
                    else:
                        still.append(i)
                        chunks.append([t, *forced])
                live = still
        results = []
        for i, r in enumerate(requests):
            kept = out[i][:-1] if finish[i] == "stop" else out[i]
            text = self.tokenizer.decode(kept, skip_special_tokens=True)
            results.append(
                Decoded(text, kept, len(r.prompt_ids), len(out[i]), finish[i], cached[i])
            )  # the stop token counts
        return results

    def _reuse(self, kv: RowKV, i: int, prompt: list[int], chunks: list[list[int]]) -> int:
        """Start row ``i`` from the longest cached prefix of its prompt; the tokens reused."""
        if self.prefix_cache is None:
            return 0
        entry, n = self.prefix_cache.longest(list(prompt))
        if entry is None:
            return 0
        for layer, (k, v) in enumerate(zip(entry.keys, entry.values, strict=False)):
            shape = (k.shape[0], kv.capacity[i], k.shape[2])
            kv.keys[(layer, i)] = k.new_empty(shape)
            kv.values[(layer, i)] = v.new_empty(shape)
            kv.keys[(layer, i)][:, :n] = k[:, :n]
            kv.values[(layer, i)][:, :n] = v[:, :n]
        kv.length[i] = n
        chunks[i] = chunks[i][n:]
        return n

    def _keep(self, kv: RowKV, i: int, prompt: list[int], out: list[int]) -> None:
        """Store a finished row's keys and values for the chat's next turn."""
        if self.prefix_cache is None or (0, i) not in kv.keys:
            return
        n = kv.length.get(i, 0)
        layers = sorted(layer for layer, row in kv.keys if row == i)
        self.prefix_cache.put(
            [*prompt, *out][:n],
            len(prompt),
            [kv.keys[(layer, i)] for layer in layers],
            [kv.values[(layer, i)] for layer in layers],
        )

    def _forward(self, kv: RowKV, live: list[int], chunks: list[list[int]]) -> torch.Tensor:
        """Logits of each live row's last new token, as float32. The rows' new tokens are read
        as one packed sequence, so a pass costs the tokens it reads, not rows x the longest chunk."""
        total = sum(len(c) for c in chunks)
        size = invariant_count(total, self.model.dtype)
        ids = torch.full((1, size), self.pad_id, dtype=torch.long)
        positions = torch.zeros((1, size), dtype=torch.long)
        plan: list[tuple[int, int, int]] = []
        start = 0
        for i, c in zip(live, chunks, strict=False):
            past = kv.length.get(i, 0)
            ids[0, start : start + len(c)] = torch.tensor(c)
            positions[0, start : start + len(c)] = torch.arange(past, past + len(c))
            plan.append((i, start, len(c)))
            start += len(c)
        last = [s + n - 1 for _, s, n in plan]
        keep = last + [size - 1] * (
            invariant_count(len(last), self.model.dtype) - len(last)
        )  # the logits' row count, too
        step = Pass(kv, plan)
        device = self.model.device  # the pass is planned on the CPU; a GPU model reads it on its own device
        logits = self.model(
            input_ids=ids.to(device),
            position_ids=positions.to(device),
            use_cache=False,
            logits_to_keep=torch.tensor(keep, device=device),
            negotiator_pass=step,
        ).logits
        step.commit()
        return logits[0, : len(live), :].float().cpu()  # the grammar's masks and the sampling run on the CPU
