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

Why not continuous batching: HF ``generate`` with static batches is robust, and in an
eval the requests arrive together, so rows rarely wait for a batch; the benchmark
(benchmarks/local_throughput.py) measures what is lost against raw ``generate``.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import xgrammar as xgr
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

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
    token_ids: list[int]
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
        """One batched ``generate`` call for ``requests`` (the worker calls this)."""
        n = len(requests)
        width = max(len(r.prompt_ids) for r in requests)
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for i, r in enumerate(requests):  # left padding: every row's next token is at the end
            ids[i, width - len(r.prompt_ids):] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids):] = 1
        limits = [max(1, r.max_new_tokens) for r in requests]
        processors = LogitsProcessorList()
        grammars = [r.grammar for r in requests]
        if any(g is not None for g in grammars):
            processors.append(_RowGrammars(grammars, self.vocab_size))
        processors.append(_RowSampling([r.sampling for r in requests]))
        config = GenerationConfig(
            do_sample=False,  # _RowSampling has already picked each row's token
            max_new_tokens=max(limits), eos_token_id=self.stop_ids, pad_token_id=self.pad_id,
        )
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids, attention_mask=mask, generation_config=config, logits_processor=processors,
                stopping_criteria=StoppingCriteriaList([_RowLimits(width, limits)]),
            )
        results = []
        for i, r in enumerate(requests):
            new = out[i, width:].tolist()[: limits[i]]
            stop_at = next((k for k, t in enumerate(new) if t in self.stop_ids), None)
            finish = "stop" if stop_at is not None else "length"
            kept = new if stop_at is None else new[:stop_at]
            counted = len(kept) + (1 if stop_at is not None else 0)  # the stop token was generated too
            text = self.tokenizer.decode(kept, skip_special_tokens=True)
            results.append(GenResult(text, kept, len(r.prompt_ids), counted, finish))
        return results

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


class _RowGrammars(LogitsProcessor):
    """Masks each constrained row's logits to the tokens its grammar allows next."""

    def __init__(self, grammars: list[Any], vocab_size: int):
        self.matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self.live = [i for i, m in enumerate(self.matchers) if m is not None]
        self.bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self.started = False

    def __call__(self, input_ids, scores):
        if self.started:
            still = []
            for i in self.live:
                m = self.matchers[i]
                # A row that hit its own token limit is fed padding: it fails to match and is dropped.
                if m.accept_token(int(input_ids[i, -1])) and not m.is_terminated():
                    still.append(i)
            self.live = still
        self.started = True
        if not self.live:
            return scores
        for i in self.live:
            self.matchers[i].fill_next_token_bitmask(self.bitmask, i)
        xgr.apply_token_bitmask_inplace(scores, self.bitmask, indices=self.live)
        return scores


class _RowSampling(LogitsProcessor):
    """Picks each row's next token (per-row temperature, top-k, top-p, seed) after the grammar mask.

    It returns scores with only the picked token left, and ``generate`` runs greedy: a
    multinomial draw over a 262k vocabulary costs more per step on a CPU than over the
    top-k (or top-1024) candidates drawn from here. Temperature 0 is greedy.
    """

    def __init__(self, settings: list[Sampling]):
        self.settings = settings
        self.greedy = torch.tensor([s.temperature <= 1e-5 for s in settings])
        self.temps = torch.tensor([max(s.temperature, 1e-5) for s in settings], dtype=torch.float32)
        self.top_p = torch.tensor([s.top_p if 0 < s.top_p <= 1 else 1.0 for s in settings], dtype=torch.float32)
        self.generators = [_generator(s.seed) for s in settings]

    def __call__(self, input_ids, scores):
        choice = scores.argmax(dim=-1)
        if not bool(self.greedy.all()):
            ks = [s.top_k for s in self.settings]
            kk = min(scores.shape[-1], max(k if k > 0 else _CANDIDATES for k in ks))
            vals, idx = scores.topk(kk, dim=-1)
            vals = vals / self.temps[:, None]
            keep = torch.ones_like(vals, dtype=torch.bool)
            for row, k in enumerate(ks):
                if 0 < k < kk:
                    keep[row, k:] = False
            keep &= torch.isfinite(vals)  # tokens the grammar forbids
            probs = torch.softmax(vals.masked_fill(~keep, float("-inf")), dim=-1)
            keep &= (probs.cumsum(-1) - probs) < self.top_p[:, None]  # nucleus: mass of better tokens < top_p
            keep[:, 0] = True
            probs = torch.softmax(vals.masked_fill(~keep, float("-inf")), dim=-1)
            for row in range(len(self.settings)):
                if not self.greedy[row]:
                    pick = torch.multinomial(probs[row], 1, generator=self.generators[row])
                    choice[row] = idx[row, pick[0]]
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, choice[:, None], 0.0)
        return out


_CANDIDATES = 1024  # without top-k, sample among the best 1024 tokens (the rest carry negligible mass)


def _generator(seed: int | None):
    if seed is None:
        return None
    g = torch.Generator()
    g.manual_seed(seed)
    return g


class _RowLimits(StoppingCriteria):
    """Each row stops at its own ``max_tokens``."""

    def __init__(self, prompt_width: int, limits: list[int]):
        self.width = prompt_width
        self.limits = torch.tensor(limits)

    def __call__(self, input_ids, scores, **kwargs):
        return (input_ids.shape[1] - self.width) >= self.limits
