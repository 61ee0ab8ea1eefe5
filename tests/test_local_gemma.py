"""The embedded Gemma 3 270M itself, served locally: real assisted seller turns, in the default run.

Preparing the model takes about a minute the first time (then it is cached under
$NEGOTIATOR_HOME, default ~/.cache/negotiator); a turn takes seconds.
"""

from __future__ import annotations

import asyncio
import os

from negotiator import SellerAgent
from negotiator.actions import Accept, MakeOffer
from negotiator.llm.graph import RetryPolicy
from negotiator.models.local import running_servers, stop_all
from negotiator.models.local.prepare import prepare
from negotiator.sim import generate


def test_embedded_gemma_plays_real_seller_turns_through_the_local_server():
    prepare("gemma-3-270m")
    scenarios = [generate(1), generate(5)]  # two outcome spaces: one batch, two grammars
    assert all(s.opener == "seller" for s in scenarios)

    async def turns():
        # A loaded machine can take minutes for a batch: the test is about answers, not speed.
        agent = SellerAgent("local/gemma-3-270m", max_tokens=160, retry=RetryPolicy(timeout=1800))
        return await asyncio.gather(*(agent.respond(s) for s in scenarios))

    try:
        results = asyncio.run(turns())
        (server,) = running_servers()
        pid = server.proc.pid
    finally:
        stop_all()
    for sc, turn in zip(scenarios, results, strict=False):
        # Constrained decoding: the base model's first answer is a valid action in this outcome space.
        assert turn.invalid_attempts == [] and not turn.fallback, turn.invalid_attempts
        assert not isinstance(turn.action, Accept)  # nothing to accept yet: the schema offered make_offer only
        # The default seller is assisted: the model picked one of the strategy's offers.
        advice = turn.advice
        assert advice is not None and advice.options and advice.chosen in advice.options
        assert isinstance(turn.action, MakeOffer)
        assert sc.space.validate_offer(turn.action.terms) == turn.action.terms
        # every option is worth the schedule's target, which opens at the seller's aspiration
        assert sc.seller.utility(turn.action.terms) >= advice.target - 1e-6 > sc.seller.reservation
        assert turn.usage.prompt_tokens > 200 and 10 < turn.usage.completion_tokens <= 160
    assert running_servers() == [] and not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"  # a zombie has exited
    except (ProcessLookupError, FileNotFoundError):
        return False
