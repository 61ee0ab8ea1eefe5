"""What ``--rate-limit`` does through LiteLLM's Router, against a fake provider on loopback.

One deployment with ``rpm`` = 3, the settings ``evals.routing`` gives the Router (usage-based-routing-v2 with
its pre-call check, cooldowns off, 3 retries), and six calls one after another: when each reached the provider
and how long each waited. About two minutes (the Router waits for the next minute's window).

    python benchmarks/router_rate_limit.py
"""

from __future__ import annotations

import asyncio
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from negotiator.models.litellm_model import litellm_module  # noqa: E402
from negotiator.testing import FakeOpenAIServer  # noqa: E402


async def main() -> None:
    litellm_module()
    from litellm import Router

    start = time.monotonic()
    arrivals: list[float] = []

    def provider(req: dict) -> str:
        arrivals.append(time.monotonic() - start)
        return "hi"

    with FakeOpenAIServer(provider) as srv:
        params = {"model": "hosted_vllm/m", "api_base": srv.base_url, "api_key": "x", "rpm": 3}
        router = Router(
            model_list=[{"model_name": "m", "litellm_params": params}],
            routing_strategy="usage-based-routing-v2",
            enable_pre_call_checks=True,
            num_retries=3,
            disable_cooldowns=True,
        )
        for i in range(6):
            t = time.monotonic()
            await router.acompletion(model="m", messages=[{"role": "user", "content": "hi"}])
            waited = time.monotonic() - t
            print(f"call {i + 1}: reached the provider at {arrivals[-1]:5.1f} s, waited {waited:4.1f} s")
        router.retire()


if __name__ == "__main__":
    asyncio.run(main())
