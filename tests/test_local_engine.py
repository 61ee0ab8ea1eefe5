"""The local engine: per-row sampling (distribution, top-k, top-p, seeds, greedy) and the decode
loop (jump-forward and rows leaving the batch change nothing about what a greedy row writes)."""

from __future__ import annotations

import collections
import math
import random

import torch

from negotiator.models.local.engine import Sampling, _draw, _RowSampling

INF = float("inf")


def test_draw_follows_the_softmax_at_the_temperature():
    rng = random.Random(0)
    n = 20000
    counts = collections.Counter(_draw([2.0, 1.0, 0.0, -INF], [7, 8, 9, 10], Sampling(1.0, 1.0, 0), rng) for _ in range(n))
    z = math.e**2 + math.e + 1
    for token, p in zip([7, 8, 9], [math.e**2 / z, math.e / z, 1 / z]):
        assert abs(counts[token] / n - p) < 0.015
    assert counts[10] == 0  # a token the grammar forbids is never drawn
    hot = collections.Counter(_draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(4.0, 1.0, 0), rng) for _ in range(n))
    assert hot[9] / n > 0.2  # a higher temperature flattens the distribution


def test_draw_respects_top_k_and_top_p():
    rng = random.Random(1)
    assert {_draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(1.0, 1.0, 1), rng) for _ in range(200)} == {7}
    # top_p 0.7: 7 holds 66.5% of the mass, so 7 and 8 stay, 9 goes
    assert {_draw([2.0, 1.0, 0.0], [7, 8, 9], Sampling(1.0, 0.7, 0), rng) for _ in range(2000)} == {7, 8}


def test_row_sampling_leaves_greedy_rows_alone_and_seeds_repeat():
    scores = torch.tensor([[0.0, 3.0, 1.0, 2.0], [0.0, 3.0, 1.0, 2.0]])
    greedy_then_hot = _RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])
    out = greedy_then_hot([0, 1], scores.clone())
    assert torch.equal(out[0], scores[0])  # generate's argmax decides a greedy row
    assert (out[1] == INF).sum() == 1
    again = _RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])([0, 1], scores.clone())
    assert torch.equal(out, again)  # same seed, same logits: same token
    picks = {int(_RowSampling([Sampling(50.0, 1.0, 0, seed=s)])([0], scores[:1].clone()).argmax()) for s in range(40)}
    # after other rows left the batch, a request keeps its own settings: row 0 is now request 1
    solo = _RowSampling([Sampling(0.0), Sampling(50.0, 1.0, 0, seed=3)])([1], scores[1:].clone())
    assert torch.equal(solo[0], out[1])
    assert picks == {0, 1, 2, 3}  # a hot, seeded row still explores every token


def test_decode_loop_matches_hf_generate_for_unconstrained_greedy_rows(tmp_path):
    """The engine's own loop (rows leaving the batch early) writes what model.generate writes."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from negotiator.models.local.engine import Engine, GenRequest
    from negotiator.models.local.tiny import build_tiny_gemma

    folder = build_tiny_gemma(tmp_path / "tiny")
    model, tok = AutoModelForCausalLM.from_pretrained(str(folder)).eval(), AutoTokenizer.from_pretrained(str(folder))
    engine = Engine(model, tok)
    chats = [[{"role": "user", "content": "Offer " * k}] for k in (1, 5, 12)]
    prompts = [engine.prompt_ids(c) for c in chats]
    limits = [5, 17, 9]  # different lengths: rows leave the batch at different steps
    got = engine.generate([GenRequest(p, n, Sampling(0.0)) for p, n in zip(prompts, limits)])
    for p, n, g in zip(prompts, limits, got):
        ref = model.generate(torch.tensor([p]), max_new_tokens=n, do_sample=False, eos_token_id=engine.stop_ids, pad_token_id=engine.pad_id)
        new = ref[0, len(p):].tolist()
        stop = next((k for k, t in enumerate(new) if t in engine.stop_ids), None)
        assert g.text == tok.decode(new[:stop], skip_special_tokens=True)
        assert g.completion_tokens == (len(new) if stop is None else stop + 1) and g.prompt_tokens == len(p)
