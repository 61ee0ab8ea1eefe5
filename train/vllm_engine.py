"""Rollout generation on vLLM (the gpu profile), behind the local engine's interface.

The rollouts ask an engine for ``grammar(schema)`` and ``generate(requests)`` (see
``negotiator.models.local.engine``); here vLLM answers them: colocated on the training
GPUs (``--generation vllm-colocate``), or a ``trl vllm-serve`` server
(``--generation vllm-server``, see deployments/training/README.md). TRL pushes the
updated weights to vLLM before each step's rollouts. JSON schemas go to vLLM's structured
outputs (its xgrammar backend), as the seller's requests do when it is served by vLLM.

Not exercised by the CPU test suite (vLLM needs a GPU); the CPU profile uses the local
engine.
"""

from __future__ import annotations

from collections import defaultdict


class VLLMEngineFactory:
    """Makes the engine once the trainer (which owns the vLLM instance or client) exists."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.trainer = None

    def __call__(self, model, sampling):
        if self.trainer is None:
            raise RuntimeError("the vLLM engine needs the trainer: set factory.trainer after building it")
        return VLLMEngine(self.trainer, self.cfg.generation, sampling)


class VLLMEngine:
    def __init__(self, trainer, generation: str, sampling):
        self.trainer, self.generation, self.sampling = trainer, generation, sampling
        self.tokenizer = trainer.processing_class
        self.stop_ids = list(trainer.eos_token_ids)

    def grammar(self, schema: dict | None):
        return schema  # vLLM compiles (and caches) JSON schemas itself

    def generate(self, requests):
        if self.generation == "vllm-server":
            return self._server(requests)
        return self._colocate(requests)

    def _colocate(self, requests):
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        llm = self.trainer.vllm_generation.llm
        s = self.sampling
        params = [
            SamplingParams(
                temperature=s.temperature, top_p=s.top_p, top_k=s.top_k if s.top_k > 0 else -1, max_tokens=r.max_new_tokens,
                stop_token_ids=self.stop_ids, structured_outputs=StructuredOutputsParams(json=r.grammar) if r.grammar else None,
            )
            for r in requests
        ]
        outs = llm.generate([{"prompt_token_ids": r.prompt_ids} for r in requests], sampling_params=params, use_tqdm=False)
        return [self._result(r.prompt_ids, list(o.outputs[0].token_ids)) for r, o in zip(requests, outs)]

    def _server(self, requests):
        import json

        client = self.trainer.vllm_generation.vllm_client
        by_schema: dict[str, list[int]] = defaultdict(list)  # one call per schema: the client takes one
        for i, r in enumerate(requests):
            by_schema[json.dumps(r.grammar, sort_keys=True)].append(i)
        results = [None] * len(requests)
        for key, rows in by_schema.items():
            schema = json.loads(key)
            out = client.generate(
                prompts=[requests[i].prompt_ids for i in rows], n=1, temperature=self.sampling.temperature,
                top_p=self.sampling.top_p, top_k=self.sampling.top_k if self.sampling.top_k > 0 else -1,
                max_tokens=max(requests[i].max_new_tokens for i in rows),
                generation_kwargs={"stop_token_ids": self.stop_ids, **({"structured_outputs": {"json": schema}} if schema else {})},
            )
            for i, ids in zip(rows, out["completion_ids"]):
                results[i] = self._result(requests[i].prompt_ids, list(ids)[: requests[i].max_new_tokens])
        return results

    def _result(self, prompt_ids: list[int], ids: list[int]):
        from .generation import Generated

        stop_at = next((k for k, t in enumerate(ids) if t in self.stop_ids), None)
        kept = ids if stop_at is None else ids[:stop_at]
        text = self.tokenizer.decode(kept, skip_special_tokens=True)
        counted = len(kept) + (0 if stop_at is None else 1)
        return Generated(text, kept, len(prompt_ids), counted, "length" if stop_at is None else "stop")
