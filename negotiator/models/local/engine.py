"""The batching generation engine behind the local server.

Concurrent requests are gathered into one ``model.generate`` call (left padding): the
negotiations of an eval ask in near lockstep, so the engine waits a moment (at most
``max_wait_s``) for as many requests as the last batch held, and they share every forward
pass. Each row carries its own sampling settings, token limit and grammar:

* ``response_format`` JSON schemas become xgrammar grammars (the engine vLLM uses for
  structured outputs), compiled once per schema and applied as a per-row token mask
  *before* sampling, so a schema-constrained row can only write valid JSON;
* temperature, top-k and top-p are applied per row after the mask (a mask applied after
  top-k could leave no token at all); temperature 0 is greedy.

The decode loop is HF's greedy search written out, so a row can leave the batch as soon
as it stops (rows of one batch write answers of different lengths). Requests do not join
a running batch (no continuous batching): in an eval they arrive together anyway. The
benchmark (benchmarks/local_throughput.py) measures what is lost against raw ``generate``.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import random
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import xgrammar as xgr
from transformers import DynamicCache

log = logging.getLogger("negotiator.local")


@dataclass
class Sampling:
    temperature: float = 1.0  # 0 = greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 = off
    seed: int | None = None  # a seeded row draws the same tokens from the same logits


@dataclass
class GenRequest:
    prompt_ids: list[int]
    max_new_tokens: int
    sampling: Sampling = field(default_factory=Sampling)
    grammar: Any = None  # xgrammar.CompiledGrammar, or None for free text
    future: Future = field(default_factory=Future)


@dataclass
class GenResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" or "length"


def load_model(folder: Path, dtype: str = "auto", base: Path | None = None):
    """(model, tokenizer, weights folder) for a transformers folder or a LoRA adapter folder
    (merged into ``base``, default: the adapter's ``base_model_name_or_path``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)  # auto: as saved (bf16 for gemma-3-270m)
    adapter = (folder / "adapter_config.json").is_file()
    if adapter:
        from peft import PeftModel

        base = base or Path(json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"])
        model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch_dtype)
        model = PeftModel.from_pretrained(model, str(folder)).merge_and_unload()  # merged: no adapter cost per token
        tok_dir = folder if (folder / "tokenizer_config.json").is_file() else base
        weights = base
    else:
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype)
        tok_dir = weights = folder
    tok = AutoTokenizer.from_pretrained(str(tok_dir))
    if tok.chat_template is None and (base_tpl := _template_of(tok)) is not None:
        tok.chat_template = base_tpl
    return model.eval(), tok, weights


def _template_of(tok) -> str | None:
    from .prepare import GEMMA_CHAT_TEMPLATE

    return GEMMA_CHAT_TEMPLATE if "<start_of_turn>" in tok.get_vocab() else None


class Engine:
    """One model, one worker thread, batched generation with per-row grammars."""

    def __init__(self, model, tokenizer, *, max_batch: int = 16, gather_s: float = 0.03, max_wait_s: float = 0.5):
        self.model, self.tokenizer = model, tokenizer
        self.max_batch, self.gather_s, self.max_wait_s = max_batch, gather_s, max_wait_s
        gc = model.generation_config
        eos = gc.eos_token_id if gc.eos_token_id is not None else tokenizer.eos_token_id
        self.stop_ids: list[int] = list(eos) if isinstance(eos, (list, tuple)) else [eos]
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_ids[0]
        self.vocab_size = model.config.vocab_size
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=self.vocab_size, stop_token_ids=self.stop_ids)
        self._compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._grammars: dict[str, Any] = {}
        self._grammar_lock = threading.Lock()
        self._queue: queue.Queue[GenRequest] = queue.Queue()
        self._last_batch = 1
        self.stats = {"batches": 0, "rows": 0, "completion_tokens": 0, "prompt_tokens": 0, "busy_s": 0.0}
        self._thread = threading.Thread(target=self._loop, name="negotiator-engine", daemon=True)
        self._thread.start()

    # --- public ----------------------------------------------------------------------

    def grammar(self, schema: dict | None) -> Any:
        """The compiled grammar of a JSON schema (None: any JSON object). Cached by schema."""
        key = json.dumps(schema, sort_keys=True)
        with self._grammar_lock:
            g = self._grammars.get(key)
            if g is None:
                if schema is None:
                    g = self._compiler.compile_builtin_json_grammar()
                else:
                    # One line, ", " and ": " separators: the JSON shape the prompt shows.
                    g = self._compiler.compile_json_schema(json.dumps(schema), any_whitespace=False)
                if len(self._grammars) > 256:
                    self._grammars.clear()
                self._grammars[key] = g
            return g

    def prompt_ids(self, messages: list[dict]) -> list[int]:
        """Token ids of a chat; raises ValueError when the chat template refuses it."""
        if self.tokenizer.chat_template is None:
            raise ValueError("this model folder has no chat template; add one to its tokenizer_config.json")
        try:
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as e:  # jinja raise_exception: roles that do not alternate, tool roles ...
            raise ValueError(f"the chat template refused these messages: {e}") from None
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def submit(self, request: GenRequest) -> Future:
        self._queue.put(request)
        return request.future

    def generate(self, requests: list[GenRequest]) -> list[GenResult]:
        """Generate for ``requests`` as one batch (the worker calls this).

        HF's greedy search written out, with two changes that matter on a CPU:

        * jump-forward: where a row's grammar allows exactly one continuation (the keys,
          quotes and braces of the JSON: about two thirds of a make_offer answer), those
          tokens are appended without decoding them one by one; the next forward pass
          reads them at once, right-aligned with the other rows' tokens (padding masked);
        * a row leaves the batch the moment it stops.
        """
        n = len(requests)
        width = max(len(r.prompt_ids) for r in requests)
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for i, r in enumerate(requests):  # left padding: every row's next token is at the end
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        grammars = _RowGrammars([r.grammar for r in requests], self.vocab_size)
        sampling = _RowSampling([r.sampling for r in requests])
        limits = [max(1, r.max_new_tokens) for r in requests]
        out: list[list[int]] = [[] for _ in requests]
        finish = ["length"] * n
        live = list(range(n))  # request index of each row still in the batch
        cache = DynamicCache(config=self.model.config)
        with torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                                use_cache=True, logits_to_keep=1).logits[:, -1, :].float()
            pos = positions[:, -1]
            while True:
                tokens = sampling(live, grammars(live, logits)).argmax(dim=-1).tolist()
                grammars.accept(live, tokens)
                keep, chunks = [], []
                for row, (i, t) in enumerate(zip(live, tokens)):
                    out[i].append(t)
                    if t in self.stop_ids:
                        finish[i] = "stop"
                        continue
                    forced = self._forced(grammars, i, limits[i] - len(out[i]))
                    out[i] += forced
                    if len(out[i]) < limits[i]:
                        keep.append(row)
                        chunks.append([t, *forced])
                if not keep:
                    break
                if len(keep) < len(live):  # drop finished rows from the batch and the cache
                    index = torch.tensor(keep)
                    cache.batch_select_indices(index)
                    mask, pos = mask[index], pos[index]
                    live = [live[k] for k in keep]
                step = max(len(c) for c in chunks)
                ids = torch.full((len(live), step), self.pad_id, dtype=torch.long)
                new_mask = torch.zeros((len(live), step), dtype=torch.long)
                for row, c in enumerate(chunks):  # right-aligned: every row's last token is real
                    ids[row, step - len(c):] = torch.tensor(c)
                    new_mask[row, step - len(c):] = 1
                new_pos = pos[:, None] + new_mask.cumsum(-1).clamp(min=1)  # padding takes a masked dummy position
                mask, pos = torch.cat([mask, new_mask], dim=1), new_pos[:, -1]
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=new_pos, cache=cache,
                                    use_cache=True, logits_to_keep=1).logits[:, -1, :].float()
        results = []
        for i, r in enumerate(requests):
            kept = out[i][:-1] if finish[i] == "stop" else out[i]
            text = self.tokenizer.decode(kept, skip_special_tokens=True)
            results.append(GenResult(text, len(r.prompt_ids), len(out[i]), finish[i]))  # the stop token counts
        return results

    def _forced(self, grammars: _RowGrammars, i: int, room: int) -> list[int]:
        """The tokens request ``i``'s grammar forces next (at most ``room``), already accepted."""
        m = grammars.matchers[i]
        if m is None or room <= 0 or m.is_terminated():
            return []
        text = m.find_jump_forward_string()
        if not text:
            return []
        forced = []
        for t in self.tokenizer(text, add_special_tokens=False)["input_ids"][:room]:
            if not m.accept_token(t):  # cannot happen for an exact forced string; stop jumping if it does
                break
            forced.append(t)
        return forced

    # --- worker ----------------------------------------------------------------------

    def _gather(self) -> list[GenRequest]:
        """The next batch. Requests of an eval come back in lockstep: wait (up to ``max_wait_s``)
        until as many are queued as were in the last batch, then take stragglers that arrive
        within ``gather_s`` of each other."""
        batch = [self._queue.get()]
        deadline = time.monotonic() + self.max_wait_s
        while len(batch) < self.max_batch:
            gap = self.gather_s if len(batch) >= self._last_batch else deadline - time.monotonic()
            wait = min(gap, deadline - time.monotonic())
            if wait <= 0:
                break
            try:
                batch.append(self._queue.get(timeout=wait))
            except queue.Empty:
                break
        live = [r for r in batch if r.future.set_running_or_notify_cancel()]  # drop requests given up on
        self._last_batch = max(1, len(live))
        return live

    def _loop(self) -> None:
        while True:
            batch = self._gather()
            if not batch:
                continue
            t0 = time.perf_counter()
            try:
                results = self.generate(batch)
            except Exception as e:  # a failed batch fails its requests, never the server
                log.exception("generation failed")
                for r in batch:
                    r.future.set_exception(e)
                continue
            busy = time.perf_counter() - t0
            s = self.stats
            s["batches"] += 1
            s["rows"] += len(batch)
            s["busy_s"] += busy
            s["prompt_tokens"] += sum(x.prompt_tokens for x in results)
            s["completion_tokens"] += sum(x.completion_tokens for x in results)
            log.info("batch of %d: %d new tokens in %.2fs", len(batch), sum(x.completion_tokens for x in results), busy)
            for r, res in zip(batch, results):
                r.future.set_result(res)


# --- logits processors and stopping criteria ------------------------------------------


class _RowGrammars:
    """Per-request grammar matchers; masks each live constrained row to the tokens allowed next."""

    def __init__(self, grammars: list[Any], vocab_size: int):
        self.matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self.any = any(m is not None for m in self.matchers)
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size) if self.any else None

    def __call__(self, live: list[int], scores: torch.Tensor) -> torch.Tensor:
        if not self.any:
            return scores
        rows = [row for row, i in enumerate(live) if self.matchers[i] is not None and not self.matchers[i].is_terminated()]
        if rows:
            for row in rows:
                self.matchers[live[row]].fill_next_token_bitmask(self.bitmask, row)
            xgr.apply_token_bitmask_inplace(scores, self.bitmask[: len(live)], indices=rows)
        return scores

    def accept(self, live: list[int], tokens: list[int]) -> None:
        for i, t in zip(live, tokens):
            m = self.matchers[i]
            if m is not None and not m.is_terminated():
                m.accept_token(t)


class _RowSampling:
    """Picks each sampling row's next token (temperature, top-k, top-p, seed) after the grammar mask.

    The decode loop takes the argmax: a greedy row is left as it is, and a sampling row gets
    +inf on the token drawn here. On a CPU every tensor op costs a
    thread wake-up (milliseconds when the cores are busy) and every pass over the 262k
    vocabulary costs milliseconds too, so this makes one pass (top-k, or top-1024 without a
    top-k) and draws among those candidates in plain Python.
    """

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
        k = min(scores.shape[-1], max(self.settings[j].top_k or _CANDIDATES for j in picked))
        vals, idx = sub.topk(k, dim=-1)
        tokens = [_draw(v, c, self.settings[j], self.rngs[j]) for v, c, j in zip(vals.tolist(), idx.tolist(), picked)]
        scores[rows, tokens] = float("inf")
        return scores


_CANDIDATES = 1024  # without top-k, draw among the best 1024 tokens (the rest carry negligible mass)
_rng = random.Random()


def _draw(logits: list[float], ids: list[int], s: Sampling, rng: random.Random) -> int:
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
    for w, token in zip(weights[:n], ids[:n]):
        r -= w
        if r <= 0:
            return token
    return ids[n - 1]
