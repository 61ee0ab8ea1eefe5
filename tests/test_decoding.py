"""The local decoder: per-row sampling (distribution, top-k, top-p, seeds, greedy), the decode
loop (jump-forward and rows leaving the batch change nothing about what a greedy row writes),
batch invariance (a seeded row writes the same tokens alone and among fifteen others), and
one decoder for serving and training (the same request gives the same tokens on both paths)."""

from __future__ import annotations

import asyncio
import collections
import math
import random

import pytest
import torch

from negotiator.models.local.decoding import Request, Sampling
from negotiator.models.local.decoding.sampling import RowSampling, draw

INF = float("inf")


def test_draw_follows_the_softmax_at_the_temperature():
    rng = random.Random(0)
    n = 20000
    counts = collections.Counter(
        draw([2.0, 1.0, 0.0, -INF], [7, 8, 9, 10], Sampling(1.0, 1.0, 0), rng) for _ in range(n)
    )
    z = math.e**2 + math.e + 1
    for token, p in zip([7, 8, 9], [math.e**2 / z, math.e / z, 1 / z], strict=False):
        assert abs(counts[token] / n - p) < 0.015
    assert counts[10] == 0  # a token the grammar forbids is never drawn
    hot = collections.Counter(draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(4.0, 1.0, 0), rng) for _ in range(n))
    assert hot[9] / n > 0.2  # a higher temperature flattens the distribution


def test_draw_respects_top_k_and_top_p():
    rng = random.Random(1)
    assert {draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(1.0, 1.0, 1), rng) for _ in range(200)} == {7}
    # top_p 0.7: 7 holds 66.5% of the mass, so 7 and 8 stay, 9 goes
    assert {draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(1.0, 0.7, 0), rng) for _ in range(2000)} == {7, 8}


def test_row_sampling_leaves_greedy_rows_alone_and_seeds_repeat():
    scores = torch.tensor([[0.0, 3.0, 1.0, 2.0], [0.0, 3.0, 1.0, 2.0]])
    greedy_then_hot = RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])
    out = greedy_then_hot([0, 1], scores.clone())
    assert torch.equal(out[0], scores[0])  # the loop's argmax decides a greedy row
    assert (out[1] == INF).sum() == 1
    again = RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])([0, 1], scores.clone())
    assert torch.equal(out, again)  # same seed, same logits: same token
    picks = {int(RowSampling([Sampling(50.0, 1.0, 0, seed=s)])([0], scores[:1].clone()).argmax()) for s in range(40)}
    # after other rows left the batch, a request keeps its own settings: row 0 is now request 1
    solo = RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])([1], scores[1:].clone())
    assert torch.equal(solo[0], out[1])
    assert picks == {0, 1, 2, 3}  # a hot, seeded row still explores every token


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(model, tokenizer) of the tiny random Gemma 3, float32 as it is saved."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from negotiator.models.local.tiny import build_tiny_gemma

    folder = build_tiny_gemma(tmp_path_factory.mktemp("tiny") / "tiny")
    return AutoModelForCausalLM.from_pretrained(str(folder)).eval(), AutoTokenizer.from_pretrained(str(folder))


def test_decode_loop_matches_hf_generate_for_unconstrained_greedy_rows(tiny):
    """The decoder's own loop (its row attention, rows leaving the batch early) writes what model.generate writes."""
    from negotiator.models.local.decoding import Decoder

    model, tok = tiny
    decoder = Decoder(model, tok)
    chats = [[{"role": "user", "content": "Offer " * k}] for k in (1, 5, 12)]
    prompts = [decoder.prompt_ids(c) for c in chats]
    limits = [5, 17, 9]  # different lengths: rows leave the batch at different steps
    got = decoder.generate([Request(p, n, Sampling(0.0)) for p, n in zip(prompts, limits, strict=False)])
    for p, n, g in zip(prompts, limits, got, strict=False):
        ref = model.generate(
            torch.tensor([p]),
            max_new_tokens=n,
            do_sample=False,
            eos_token_id=decoder.stop_ids,
            pad_token_id=decoder.pad_id,
        )
        new = ref[0, len(p) :].tolist()
        stop = next((k for k, t in enumerate(new) if t in decoder.stop_ids), None)
        assert g.token_ids == new[:stop] and g.text == tok.decode(new[:stop], skip_special_tokens=True)
        assert g.completion_tokens == (len(new) if stop is None else stop + 1) and g.prompt_tokens == len(p)


def _offer_schema():
    return {
        "type": "object",
        "properties": {
            "action": {"enum": ["make_offer", "accept"]},
            "message": {"type": "string", "maxLength": 8},
            "price": {"type": "integer", "minimum": 800, "maximum": 1200},
        },
        "required": ["action", "message", "price"],
    }


def _mixed_requests(decoder, n=16):
    """Seeded rows of different prompt lengths, limits and grammars (every other row free text)."""
    g = decoder.grammar(_offer_schema())
    chats = [[{"role": "user", "content": "Offer " * (1 + 3 * k) + "a price"}] for k in range(n)]
    return [
        Request(
            decoder.prompt_ids(c),
            24 + k if k % 2 == 0 else 4 + k // 2,
            Sampling(1.0, 0.95, 0, seed=100 + k),
            g if k % 2 == 0 else None,
        )
        for k, c in enumerate(chats)
    ]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_seeded_row_writes_the_same_tokens_alone_and_in_a_batch_of_16(tiny, dtype):
    """The property that makes evaluations reproducible at any concurrency: padding, the batch
    size and the other rows change nothing about a seeded row's tokens (fp32 exercises the
    empty rows the decoder adds at row counts where MKL's products depend on the count)."""
    from negotiator.models.local.decoding import Decoder

    model, tok = tiny
    decoder = Decoder(model.to(getattr(torch, dtype)), tok)
    try:
        requests = _mixed_requests(decoder)
        batch = decoder.generate(requests)
        four = decoder.generate(requests[5:9])
        alone = [decoder.generate([r])[0] for r in requests]
    finally:
        model.float()
    assert [a.token_ids for a in alone] == [b.token_ids for b in batch]
    assert [a.token_ids for a in alone[5:9]] == [b.token_ids for b in four]
    assert len({tuple(b.token_ids) for b in batch}) == 16  # the rows did sample, each its own way
    assert sum(b.finish_reason == "stop" for b in batch[::2]) >= 4  # and the constrained ones finished their JSON


def test_the_model_attends_as_before_outside_the_decoder(tiny):
    """Training's loss runs on the same model object: its ordinary forward is untouched."""
    from negotiator.models.local.decoding import Decoder

    model, tok = tiny
    ids = torch.tensor([Decoder(model, tok).prompt_ids([{"role": "user", "content": "Offer a price"}])])
    before = model(input_ids=ids).logits
    Decoder(model, tok).generate([Request(ids[0].tolist(), 4, Sampling(0.0))])
    assert model.config._attn_implementation == "sdpa"
    assert torch.equal(model(input_ids=ids).logits, before)


def test_the_serving_path_and_the_training_path_write_the_same_tokens(tiny_home, seller_first):
    """One decoder: a seller request through LiteLLM, HTTP and the local server's batching, and
    the same request from a GRPO rollout's policy (``train.policy``), give the same answer, token
    for token, with the same defaults (the folder's sampling settings, its stop tokens)."""
    pytest.importorskip("trl")
    from negotiator.actions import action_json_schema
    from negotiator.llm.prompt import render_messages
    from negotiator.models.base import ModelRequest
    from negotiator.models.local import local_model
    from negotiator.models.local.decoding import Decoder, sampling_defaults
    from negotiator.party import PartyView
    from train.base_model import load_base
    from train.policy import Batcher, PolicyModel

    view = PartyView.of(seller_first, "seller", ())
    schema = action_json_schema(seller_first.space, ("make_offer", "walk_away"))
    requests = [
        ModelRequest(render_messages(view), response_schema=schema, max_tokens=80, seed=s) for s in (11, 12, 13)
    ]

    async def serve():
        model = local_model("local/tiny-random-gemma")
        return await asyncio.gather(*(model.complete(r) for r in requests))

    served = asyncio.run(serve())
    base = load_base("local/tiny-random-gemma", dtype="float32")
    batcher = Batcher(Decoder(base.model.eval(), base.tokenizer), sampling=sampling_defaults(base.path))
    policies = [PolicyModel(batcher, base.tokenizer, spec="train/tiny", family="gemma") for _ in requests]

    async def train():
        for _ in policies:
            batcher.open()
        return await asyncio.gather(*(p.complete(r) for p, r in zip(policies, requests, strict=False)))

    trained = asyncio.run(train())
    for s, t, p in zip(served, trained, policies, strict=False):
        assert s.text == t.text and s.completion_tokens == t.completion_tokens and s.prompt_tokens == t.prompt_tokens
        written = p.trace.completion_ids[:-1] if p.trace.ended else p.trace.completion_ids
        assert base.tokenizer.decode(written, skip_special_tokens=True) == s.text
    assert len({s.text for s in served}) == 3  # three seeds, three answers


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_rows_logits_are_bit_identical_alone_and_in_a_batch(tiny, dtype):
    """Beneath the tokens: every bit of a row's logits, for its prompt and for a jump-forward
    chunk after it, whatever the batch (a last-bit difference is what flips a sampled token
    now and then over a long evaluation)."""
    from negotiator.models.local.decoding import Decoder
    from negotiator.models.local.decoding.attention import RowKV, row_attention

    model, tok = tiny
    decoder = Decoder(model.to(getattr(torch, dtype)), tok)
    try:
        prompts = [decoder.prompt_ids([{"role": "user", "content": "Offer " * (1 + 3 * k)}]) for k in range(16)]
        chunks = [[5 + k % 7] * (1 + k % 4) for k in range(16)]  # what each row reads next: 1 to 4 tokens

        def passes(rows):
            kv = RowKV(capacity={i: len(prompts[i]) + 8 for i in rows})
            with torch.inference_mode(), row_attention(model):
                first = decoder._forward(kv, rows, [prompts[i] for i in rows])
                second = decoder._forward(kv, rows, [chunks[i] for i in rows])
            return first, second

        together = passes(list(range(16)))
        for i in (0, 5, 15):
            alone = passes([i])
            assert torch.equal(alone[0][0], together[0][i]) and torch.equal(alone[1][0], together[1][i])
        three = passes([2, 9, 11])
        assert torch.equal(three[1][1], together[1][9])
    finally:
        model.float()
