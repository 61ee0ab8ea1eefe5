"""The local server's batching: concurrent requests gathered into one decoder batch.

Concurrent requests are gathered into one :class:`~.decoding.Decoder` batch: the
negotiations of an eval ask in near lockstep, so the worker waits a moment (at most
``max_wait_s``) for as many requests as the last batch held, and they share every
forward pass. Each row carries its own sampling settings (seed included), token limit and
grammar (:mod:`.decoding`). Requests do not join a running batch (no continuous
batching): in an eval they arrive together anyway. The benchmark
(benchmarks/local_throughput.py) measures what is lost against raw ``generate``.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import torch

from .decoding import Decoded, Request
from .decoding.decoder import Decoder

log = logging.getLogger("negotiator.local")


def load_model(folder: Path, dtype: str = "auto", base: Path | None = None):
    """(model, tokenizer, weights folder) for a transformers folder or a LoRA adapter folder
    (merged into ``base``, default: the adapter's ``base_model_name_or_path``).

    ``dtype`` "auto": as saved (bf16 for gemma-3-270m), except bf16 on a CPU without bf16
    matrix kernels (AVX-512: oneDNN's check), where float32 runs several times faster."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    adapter = (folder / "adapter_config.json").is_file()
    if adapter:
        from peft import PeftModel

        base = base or Path(json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"])
    dtype_of = base if adapter and base is not None else folder  # an adapter's dtype is its base's
    torch_dtype = auto_dtype(dtype_of) if dtype == "auto" else getattr(torch, dtype)
    if adapter:
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


def bf16_native() -> bool:
    """Whether oneDNN multiplies bf16 natively on this CPU (AVX-512 BF16, AMX). Elsewhere torch
    emulates it, many times slower than float32 (docs/training.md, "Profiles")."""
    return torch.ops.mkldnn._is_mkldnn_bf16_supported()


def auto_dtype(folder: Path) -> torch.dtype:
    """The dtype a model folder is served in by default: as saved, but float32 for a bf16
    model on a CPU whose oneDNN has no bf16 kernels (there bf16 matrix products are emulated,
    several times slower than float32; docs/local-model.md, "Design decisions")."""
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        config = {}
    saved = config.get("dtype") or config.get("torch_dtype")
    if saved == "bfloat16" and not bf16_native():
        return torch.float32
    return getattr(torch, saved) if isinstance(saved, str) and hasattr(torch, saved) else torch.float32


def _template_of(tok) -> str | None:
    from .prepare import GEMMA_CHAT_TEMPLATE

    return GEMMA_CHAT_TEMPLATE if "<start_of_turn>" in tok.get_vocab() else None


class BatchingEngine:
    """One model, one worker thread: requests submitted from any thread, decoded in batches."""

    def __init__(self, decoder: Decoder, *, max_batch: int = 16, gather_s: float = 0.03, max_wait_s: float = 0.5):
        self.decoder = decoder
        self.max_batch, self.gather_s, self.max_wait_s = max_batch, gather_s, max_wait_s
        self._queue: queue.Queue[tuple[Request, Future]] = queue.Queue()
        self._last_batch = 1
        self.stats = {"batches": 0, "rows": 0, "completion_tokens": 0, "prompt_tokens": 0, "busy_s": 0.0}
        self.stats["running"] = 0  # requests being generated now (vLLM's num_requests_running)
        self._thread = threading.Thread(target=self._loop, name="negotiator-engine", daemon=True)
        self._thread.start()

    def submit(self, request: Request) -> Future[Decoded]:
        future: Future[Decoded] = Future()
        self._queue.put((request, future))
        return future

    def _gather(self) -> list[tuple[Request, Future]]:
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
        live = [(r, f) for r, f in batch if f.set_running_or_notify_cancel()]  # drop requests given up on
        self._last_batch = max(1, len(live))
        return live

    def _loop(self) -> None:
        while True:
            batch = self._gather()
            if not batch:
                continue
            t0 = time.perf_counter()
            self.stats["running"] = len(batch)
            try:
                results = self.decoder.generate([r for r, _ in batch])
            except Exception as e:  # a failed batch fails its requests, never the server
                log.exception("generation failed")
                for _, f in batch:
                    f.set_exception(e)
                continue
            finally:
                self.stats["running"] = 0
            busy = time.perf_counter() - t0
            s = self.stats
            s["batches"] += 1
            s["rows"] += len(batch)
            s["busy_s"] += busy
            s["prompt_tokens"] += sum(x.prompt_tokens for x in results)
            s["completion_tokens"] += sum(x.completion_tokens for x in results)
            log.info("batch of %d: %d new tokens in %.2fs", len(batch), sum(x.completion_tokens for x in results), busy)
            for (_, f), res in zip(batch, results, strict=False):
                f.set_result(res)
