"""The local server's prefix cache: a chat's next turn reads only what is new, reuses only
its own history, and gets the keys and values a fresh read would have computed."""

from __future__ import annotations

import pytest
import torch

from negotiator.models.local.decoding import Request, Sampling
from negotiator.models.local.decoding.prefixes import PrefixCache


def _kv(n: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    return [torch.zeros(1, n, 2)], [torch.zeros(1, n, 2)]


def test_only_a_chats_own_continuation_reuses_its_entry():
    cache = PrefixCache(max_tokens=1000, min_reuse=4, slack=1)
    system, chat_a = list(range(100, 120)), list(range(200, 230))
    cache.put(system + chat_a + [7, 8], len(system + chat_a), *_kv(52))  # prompt, then the answer read
    entry, n = cache.longest(system + chat_a + [7, 9, 1, 2])  # the next turn: the answer re-tokenised differently
    assert entry is not None and n == len(system + chat_a) + 1
    # another negotiation on the same listing shares the system turn only: read in full
    assert cache.longest(system + list(range(300, 330))) == (None, 0)
    # the same prompt again (a second sample) reuses all but the last token, which starts the answer
    assert cache.longest(system + chat_a)[1] == len(system + chat_a) - 1
    assert cache.stats.requests == 3 and cache.stats.hits == 2


def test_a_longer_chat_replaces_the_entry_it_continues_and_old_entries_go_first():
    cache = PrefixCache(max_tokens=100, min_reuse=4, slack=1)
    a1 = list(range(30))
    cache.put(a1 + [1], 30, *_kv(31))
    a2 = a1 + [1, 2, 3] + list(range(40, 50)) + [5]  # chat a, one turn on: its prompt and the answer's first token
    cache.put(a2, 43, *_kv(44))
    assert len(cache) == 1 and cache.stored_tokens == 44
    cache.put(list(range(500, 540)), 40, *_kv(40))  # chat b
    cache.put(list(range(600, 640)), 40, *_kv(40))  # chat c: 124 tokens > 100, so chat a (least recent) goes
    assert len(cache) == 2 and cache.stored_tokens == 80
    assert cache.longest(a2 + [9]) == (None, 0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from negotiator.models.local.tiny import build_tiny_gemma

    folder = build_tiny_gemma(tmp_path_factory.mktemp("tiny") / "tiny")
    return AutoModelForCausalLM.from_pretrained(str(folder)).eval(), AutoTokenizer.from_pretrained(str(folder))


def _turns(decoder):
    first = [
        {"role": "system", "content": "You sell a standing desk. " * 8},
        {"role": "user", "content": "Would you take 700 for it?"},
    ]
    answer = decoder.generate([Request(decoder.prompt_ids(first), 12, Sampling(0.0))])[0]
    second = [*first, {"role": "assistant", "content": answer.text}, {"role": "user", "content": "And 750, delivered?"}]
    return decoder.prompt_ids(first), decoder.prompt_ids(second)


def test_the_next_turn_reads_only_what_is_new_and_computes_what_a_fresh_read_does(tiny):
    from negotiator.models.local.decoding import Decoder

    model, tok = tiny
    warm = Decoder(model, tok, PrefixCache(min_reuse=4))
    p1, p2 = _turns(warm)
    assert p2[: len(p1) - 4] == p1[: len(p1) - 4]  # the chat grew append-only
    again = warm.generate([Request(p2, 12, Sampling(0.0))])[0]
    assert again.cached_tokens >= len(p1) - 4 and again.prompt_tokens == len(p2)

    cold = Decoder(model, tok, PrefixCache(min_reuse=4))  # the same turn read from scratch
    fresh = cold.generate([Request(p2, 12, Sampling(0.0))])[0]
    assert fresh.cached_tokens == 0
    (w,), (c,) = warm.prefix_cache._entries.values(), cold.prefix_cache._entries.values()
    assert w.tokens[: len(p2)] == c.tokens[: len(p2)]
    for kw, kc in zip(
        w.keys + w.values, c.keys + c.values, strict=False
    ):  # every layer's keys and values of the prompt
        assert torch.allclose(kw[:, : len(p2)], kc[:, : len(p2)], atol=1e-5, rtol=1e-4)


def test_without_a_cache_nothing_is_reused(tiny):
    from negotiator.models.local.decoding import Decoder

    model, tok = tiny
    plain = Decoder(model, tok)
    _, p2 = _turns(plain)
    assert plain.generate([Request(p2, 4, Sampling(0.0))])[0].cached_tokens == 0
