"""Rollout generation on vLLM (the gpu profile): an :class:`~negotiator.models.local.decoding.Engine`.

The rollouts ask an engine for ``grammar(schema)`` and ``generate(requests)``; on the CPU
the local :class:`~negotiator.models.local.decoding.Decoder` answers, here vLLM does:
colocated on the training GPUs (``--generation vllm-colocate``), or a ``trl vllm-serve``
server (``--generation vllm-server``, see deployments/training/README.md). TRL pushes the
updated weights to vLLM before each step's rollouts. JSON schemas go to vLLM's structured
outputs (its xgrammar backend), as the seller's requests do when it is served by vLLM.

Each request's sampling settings, seed included, become its own ``SamplingParams`` in the
colocated mode: vLLM seeds each request's generator, so a GRPO row draws its own tokens.
TRL's client for ``vllm-serve`` takes one set of settings per call and no seed per
prompt: there the rows are grouped by schema and sampling settings, and left unseeded.

Not exercised by the CPU test suite (vLLM needs a GPU).
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Sequence

from negotiator.models.local.decoding import Decoded, Request, stop_ids


class VLLMEngineFactory:
    """Makes the engine once the trainer (which owns the vLLM instance or client) exists."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.trainer = None

    def __call__(self, model) -> VLLMEngine:
        if self.trainer is None:
            raise RuntimeError("the vLLM engine needs the trainer: set factory.trainer after building it")
        return VLLMEngine(self.trainer, self.cfg.generation, stop_ids(model, self.trainer.processing_class))


class VLLMEngine:
    def __init__(self, trainer, generation: str, stops: list[int]):
        self.trainer, self.generation = trainer, generation
        self.tokenizer = trainer.processing_class
        self.stop_ids = stops  # where the local decoder stops too

    def grammar(self, schema: dict | None) -> dict | None:
        return schema  # vLLM compiles (and caches) JSON schemas itself

    def generate(self, requests: Sequence[Request]) -> list[Decoded]:
        if self.generation == "vllm-server":
            return self._server(requests)
        return self._colocate(requests)

    def _colocate(self, requests: Sequence[Request]) -> list[Decoded]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        llm = self.trainer.vllm_generation.llm
        params = [
            SamplingParams(
                temperature=r.sampling.temperature,
                top_p=r.sampling.top_p,
                top_k=r.sampling.top_k if r.sampling.top_k > 0 else -1,
                seed=r.sampling.seed,
                max_tokens=r.max_new_tokens,
                stop_token_ids=self.stop_ids,
                structured_outputs=StructuredOutputsParams(json=r.grammar) if r.grammar else None,
            )
            for r in requests
        ]
        outs = llm.generate(
            [{"prompt_token_ids": r.prompt_ids} for r in requests], sampling_params=params, use_tqdm=False
        )
        return [self._result(r.prompt_ids, list(o.outputs[0].token_ids)) for r, o in zip(requests, outs, strict=False)]

    def _server(self, requests: Sequence[Request]) -> list[Decoded]:
        client = self.trainer.vllm_generation.vllm_client
        groups: dict[tuple, list[int]] = defaultdict(
            list
        )  # one call per schema and settings: the client takes one of each
        for i, r in enumerate(requests):
            groups[(json.dumps(r.grammar, sort_keys=True), dataclasses.replace(r.sampling, seed=None))].append(i)
        results: list[Decoded | None] = [None] * len(requests)
        for (key, s), rows in groups.items():
            schema = json.loads(key)
            out = client.generate(
                prompts=[requests[i].prompt_ids for i in rows],
                n=1,
                temperature=s.temperature,
                top_p=s.top_p,
                top_k=s.top_k if s.top_k > 0 else -1,
                max_tokens=max(requests[i].max_new_tokens for i in rows),
                generation_kwargs={
                    "stop_token_ids": self.stop_ids,
                    **({"structured_outputs": {"json": schema}} if schema else {}),
                },
            )
            for i, ids in zip(rows, out["completion_ids"], strict=False):
                results[i] = self._result(requests[i].prompt_ids, list(ids)[: requests[i].max_new_tokens])
        return [r for r in results if r is not None]

    def _result(self, prompt_ids: list[int], ids: list[int]) -> Decoded:
        stop_at = next((k for k, t in enumerate(ids) if t in self.stop_ids), None)
        kept = ids if stop_at is None else ids[:stop_at]
        text = self.tokenizer.decode(kept, skip_special_tokens=True)
        counted = len(kept) + (0 if stop_at is None else 1)
        return Decoded(text, kept, len(prompt_ids), counted, "length" if stop_at is None else "stop")
