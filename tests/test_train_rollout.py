"""GRPO rollouts on a tiny random Gemma 3: the token record, the reward, the buyer pool.

No trainer here (see test_train_step.py): these tests play negotiations with the rollout
code exactly as a training step does and check what it hands to TRL.
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

pytest.importorskip("trl")

from negotiator.actions import MakeOffer  # noqa: E402
from negotiator.errors import UsageError  # noqa: E402
from negotiator.models.seeds import seed_of  # noqa: E402
from negotiator.party import PartyView  # noqa: E402
from negotiator.runtime import EpisodeLog, make_party, read_episodes, run_negotiation  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny random Gemma 3 (prepared in a private cache) and an engine on it."""
    from negotiator.models.local.prepare import prepare

    old = os.environ.get("NEGOTIATOR_HOME")
    os.environ["NEGOTIATOR_HOME"] = str(tmp_path_factory.mktemp("home"))
    try:
        prepare("tiny-random-gemma")
        from negotiator.models.local.decoding import Decoder
        from train.base_model import load_base

        base = load_base("local/tiny-random-gemma", dtype="float32")
        yield base, Decoder(base.model.eval(), base.tokenizer)
    finally:
        if old is None:
            os.environ.pop("NEGOTIATOR_HOME", None)
        else:
            os.environ["NEGOTIATOR_HOME"] = old


class CountingEngine:
    """The real engine, counting its generate calls and rows."""

    def __init__(self, engine):
        self.engine, self.calls, self.rows = engine, 0, 0

    def grammar(self, schema):
        return self.engine.grammar(schema)

    def generate(self, requests):
        self.calls += 1
        self.rows += len(requests)
        return self.engine.generate(requests)


def _play(
    tiny,
    tasks,
    *,
    max_tokens=200,
    penalty=0.1,
    pool=None,
    engine=None,
    train_messages=True,
    seeds=None,
    strategy="none",
    teacher=False,
    lookahead=None,
    reader=False,
):
    from train.policy import Batcher
    from train.pool import BuyerPool
    from train.rollout import RolloutSettings, play

    base, eng = tiny
    pool = pool or BuyerPool(scenario_seeds=(3, 4, 5), max_rounds=3)
    batcher = Batcher(engine or eng)
    return asyncio.run(
        play(
            tasks,
            batcher=batcher,
            tokenizer=base.tokenizer,
            pool=pool,
            settings=RolloutSettings(
                max_tokens=max_tokens, invalid_penalty=penalty, train_messages=train_messages, strategy=strategy
            ),
            seller_spec="train/tiny",
            seller_family="gemma",
            episode_ids=[f"t{i}" for i in range(len(tasks))],
            labels=[{} for _ in tasks],
            seeds=seeds,
            teacher=teacher,
            lookahead=lookahead,
            reader=reader,
        )
    )


def _tasks(n, buyers=("rule/conceder?e=3", "rule/boulware?e=0.25", "rule/linear?e=1.5")):
    from train.tasks import Task

    return [Task(id=f"k{i}", scenario_seed=3 + i % 3, buyer=buyers[i % len(buyers)], seed=i) for i in range(n)]


def _segments(mask):
    """(start, end, value) runs of equal mask values."""
    out, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            out.append((start, i, mask[start]))
            start = i
    return out


def test_env_mask_is_zero_exactly_on_buyer_and_environment_tokens(tiny):
    from negotiator.llm.prompt import render_messages

    base, _ = tiny
    tok = base.tokenizer
    rollouts = _play(tiny, _tasks(3))
    multi_turn = 0
    for r in rollouts:
        ep, trace = r.episode, r.trace
        assert len(trace.completion_ids) == len(trace.env_mask)
        assert trace.loss_mask == trace.env_mask  # messages trained: the loss reads every seller token
        seller_turns = [t for t in ep.turns if t.party == "seller"]
        runs = _segments(trace.env_mask)
        seller_runs = [(a, b) for a, b, v in runs if v == 1]
        env_runs = [(a, b) for a, b, v in runs if v == 0]
        # One run of mask 1 per seller answer: exactly the text the seller's model wrote, then its end of turn.
        assert len(seller_runs) == len(seller_turns) == trace.turns
        eot = tok.convert_tokens_to_ids("<end_of_turn>")
        for (a, b), turn in zip(seller_runs, seller_turns, strict=False):
            written = trace.completion_ids[a:b]
            assert tok.decode(written[:-1], skip_special_tokens=True) == turn.raw_output
            assert written[-1] == eot or len(written) == 200  # ended its turn, or hit the token limit
        # Every run of mask 0 is exactly what the chat adds before the seller's next turn: the buyer's move
        # (rendered from the seller's side) and the round counter, as the deployed prompt renders it.
        assert len(env_runs) == len(seller_turns) - 1
        for k, (a, b) in enumerate(env_runs):
            nxt = seller_turns[k + 1].index
            moves = [_public(t) for t in ep.turns[:nxt]]
            view = PartyView.of(ep.scenario, "seller", moves)
            chat = tok.apply_chat_template(render_messages(view), tokenize=False, add_generation_prompt=True)
            added = tok.decode(trace.completion_ids[a:b])
            assert chat.endswith(added)
            assert added.startswith("\n<start_of_turn>user\n") and added.endswith("<start_of_turn>model\n")
            buyer_move = ep.turns[nxt - 1]
            assert buyer_move.party == "buyer"
            if buyer_move.action.message:
                assert buyer_move.action.message in added  # the buyer's words are environment tokens
            multi_turn += 1
        # The prompt is the seller's first chat, exactly as deployment renders it.
        first = seller_turns[0].index
        view = PartyView.of(ep.scenario, "seller", [_public(t) for t in ep.turns[:first]])
        chat = tok.apply_chat_template(render_messages(view), tokenize=False, add_generation_prompt=True)
        assert tok.decode(trace.prompt_ids) == chat
        assert trace.prompt_ids == tok(chat, add_special_tokens=False)["input_ids"]
    assert multi_turn >= 2, "the check needs negotiations with several seller turns"


def _public(turn):
    from negotiator.party import PublicMove

    return PublicMove(party=turn.party, action=turn.action)


def test_one_generate_call_per_wave_of_turns(tiny):
    counting = CountingEngine(tiny[1])
    rollouts = _play(tiny, _tasks(4), engine=counting)
    turns = [r.trace.turns for r in rollouts]
    assert counting.rows == sum(turns)
    assert counting.calls == max(turns) < sum(turns)  # one call per turn, however many negotiations


def test_a_steps_rollouts_read_each_turn_once_and_forget_it_after_the_step(tiny):
    """Within one GRPO step the weights are fixed, so a negotiation's next turn reuses the keys
    and values of the chat so far; the cache is dropped when the step's generation ends."""
    from types import SimpleNamespace

    from train.grpo import NegotiationRollouts
    from train.pool import BuyerPool
    from train.rollout import RolloutSettings

    base, eng = tiny
    seen = []

    class Recording(CountingEngine):
        def fixed_weights(self):
            return self.engine.fixed_weights()

        def generate(self, requests):
            out = super().generate(requests)
            seen.append(out)
            return out

    rollouts = NegotiationRollouts(
        pool=BuyerPool(scenario_seeds=(3, 4, 5), max_rounds=3),
        settings=RolloutSettings(max_tokens=200),
        tokenizer=base.tokenizer,
        seller_spec="train/tiny",
        seller_family="gemma",
        log=None,
        run_id="r",
        engine_factory=lambda model: Recording(eng),
    )
    trainer = SimpleNamespace(
        state=SimpleNamespace(global_step=0), model=base.model, accelerator=SimpleNamespace(unwrap_model=lambda m: m)
    )
    out = rollouts([t.model_dump_json() for t in _tasks(3)], trainer)
    assert len(out["prompt_ids"]) == 3 and len(seen) >= 2
    assert all(d.cached_tokens == 0 for d in seen[0])  # the first turn reads the whole chat
    later = [d for wave in seen[1:] for d in wave]
    assert all(d.cached_tokens > 0 for d in later)
    assert sum(d.cached_tokens for d in later) > 0.5 * sum(d.prompt_tokens for d in later)
    assert eng.prefix_cache is None  # nothing computed with these weights outlives the step


def test_training_reward_is_the_evaluation_score(tiny):
    from evals.summary import summarize
    from negotiator.domain.metrics import outcome_metrics
    from train.rollout import reward_of

    rollouts = _play(tiny, _tasks(3), max_tokens=24, penalty=0.5)  # short turns: some answers are invalid
    assert any(r.episode.metrics.invalid_rate > 0 for r in rollouts)
    for r in rollouts:
        ep = r.episode
        assert r.score == ep.metrics.seller_score
        assert r.reward == pytest.approx(ep.metrics.seller_score - 0.5 * ep.metrics.invalid_rate)
        assert r.score == outcome_metrics(ep.scenario, ep.outcome.terms, ep.metrics.turns).seller_score
    # ... and on deals: scripted sellers against the same pool buyers, scored both ways.
    from train.pool import BuyerPool

    pool = BuyerPool(scenario_seeds=(3, 4, 5))
    eps = []
    for i, spec in enumerate(("rule/conceder?e=3", "rule/linear?e=1.5", "rule/boulware?e=0.25")):
        seller = make_party("scripted/boulware", "seller")
        eps.append(
            asyncio.run(run_negotiation(seller, pool.buyer(spec, "neutral", i), pool.scenario(3 + i, "neutral"), i))
        )
    assert sum(e.outcome.deal for e in eps) >= 2
    for ep in eps:
        score, reward = reward_of(ep, 0.1)
        assert score == ep.metrics.seller_score
        assert summarize([ep])["overall"]["seller_score"] == pytest.approx(
            score, abs=1e-6
        )  # the report rounds to 6 places
        assert score > 0 if ep.outcome.deal else score == 0
        assert reward == score  # no invalid answers, no penalty


def test_pool_refuses_evaluation_scenario_seeds():
    from evals.suites import SUITES
    from train.pool import BuyerPool, parse_seed_range

    held = SUITES["heldout"].scenario_seeds[0]
    with pytest.raises(UsageError, match="not training seeds"):
        BuyerPool(scenario_seeds=(1, 2, held))
    with pytest.raises(UsageError, match="not training seeds"):
        parse_seed_range(f"{held}-{held + 3}")
    with pytest.raises(UsageError, match="not training seeds"):
        parse_seed_range("5000000")  # outside the training range, though no suite uses it
    assert parse_seed_range("7-9") == (7, 8, 9)
    assert parse_seed_range(" 3,1,2 ") == (3, 1, 2)


def test_default_pool_meets_no_evaluation_buyer():
    from evals.suites import SUITES
    from negotiator.buyers.personas import PERSONAS
    from train.pool import TRAIN_PERSONAS, BuyerPool

    pool = BuyerPool(scenario_seeds=(0,))
    eval_buyers = {b for s in SUITES.values() for b in s.buyers}
    eval_tactics = {p.rule_spec for p in PERSONAS.values()}
    assert not set(pool.buyers) & (eval_buyers | eval_tactics)
    assert not set(TRAIN_PERSONAS) & set(PERSONAS)
    assert pool.describe()["buyer_pool_families"] == ["rule"]
    with pytest.raises(UsageError, match="evaluation personas"):
        BuyerPool(buyers=("rule/persona",), scenario_seeds=(0,))
    with pytest.raises(UsageError, match="unknown"):
        BuyerPool(buyers=("rule/nosuchtactic",), scenario_seeds=(0,))


def test_every_training_buyer_is_checked_when_the_pool_is_made():
    """scripted/nosuch, scripted/boulware?zz=1 and mcp+ specs were refused only at the first rollout, after the
    model loaded and the run's folder recorded them (a corrected rerun was then refused: a different run);
    --buyer-base-url reached the rule buyers too, which refused it at the first rollout."""
    from train.pool import BuyerPool

    for spec, message in [
        ("scripted/nosuch", "unknown scripted model 'nosuch'"),
        ("scripted/boulware?zz=1", "unknown parameters for scripted/boulware: zz"),
        ("mcp+http://127.0.0.1:9/mcp", "a seller served elsewhere cannot be a training buyer"),
        ("local/nosuchmodel", "local/nosuchmodel: no such prepared model or folder"),
    ]:
        with pytest.raises(UsageError, match=re.escape(message)):
            BuyerPool(buyers=("rule/boulware?e=0.3", spec), scenario_seeds=(0,))
    with pytest.raises(UsageError, match="every training buyer here is rule-based: add --buyer hosted_vllm/MODEL"):
        BuyerPool(scenario_seeds=(0,), buyer_base_url="http://127.0.0.1:9")
    mixed = BuyerPool(buyers=("rule/boulware?e=0.3", "hosted_vllm/m"), scenario_seeds=(0,), buyer_base_url="http://h:1")
    assert mixed.base_url("rule/boulware?e=0.3") is None and mixed.base_url("hosted_vllm/m") == "http://h:1"
    assert mixed.buyer("rule/boulware?e=0.3", "neutral", 0).spec == "rule/boulware?e=0.3"  # refused the URL before


def test_logged_episodes_become_decision_points(tiny, tmp_path):
    from train.pool import BuyerPool
    from train.tasks import episode_tasks

    pool = BuyerPool(scenario_seeds=(3,), max_rounds=3)
    log = EpisodeLog(tmp_path / "deployment.jsonl")
    seller = make_party("scripted/boulware", "seller")
    logged = asyncio.run(run_negotiation(seller, make_party("rule/boulware", "buyer"), pool.scenario(3, "neutral"), 0))
    log.append(logged)
    tasks = episode_tasks(log.path, pool)
    seller_turns = [t.index for t in logged.turns if t.party == "seller"]
    assert [len(t.prefix) for t in tasks] == seller_turns
    later = tasks[-1]
    (r,) = _play(tiny, [later], pool=pool)
    replayed = r.episode.turns[: len(later.prefix)]
    assert [t.action for t in replayed] == [t.action for t in logged.turns[: len(later.prefix)]]
    assert r.trace.turns >= 1  # the policy took over at the decision point
    # Evaluation episodes are refused: training on them would leak the held-out set.
    logged.labels["suite"] = "heldout"
    EpisodeLog(tmp_path / "eval.jsonl").append(logged)
    with pytest.raises(UsageError, match="evaluation suite"):
        episode_tasks(tmp_path / "eval.jsonl", pool)
    assert read_episodes(log.path)[0].episode_id == logged.episode_id


def test_guard_still_protects_the_training_seller(tiny):
    rollouts = _play(tiny, _tasks(3))
    for r in rollouts:
        sc = r.episode.scenario
        for t in r.episode.turns:
            if t.party == "seller" and isinstance(t.action, MakeOffer):
                assert sc.seller_limits.allows(t.action.terms, sc.seller)
        if r.episode.outcome.deal:
            assert sc.seller.utility(r.episode.outcome.terms) >= sc.seller.reservation - 1e-9


def test_a_group_samples_each_row_its_own_way_and_a_rerun_repeats_it(tiny):
    """The rows of a GRPO group play one task: the row enters each seller turn's seed, so their
    answers differ (else the group has no advantage to learn from), and the same rows replayed
    write the same tokens, however the step's negotiations share their batches."""
    group = _tasks(1) * 4
    first = _play(tiny, group, max_tokens=60)
    answers = [r.trace.completion_ids[: r.trace.env_mask.index(0) if 0 in r.trace.env_mask else None] for r in first]
    assert len({tuple(a) for a in answers}) == 4
    again = _play(
        tiny,
        group[:1] + _tasks(3, buyers=("rule/boulware?e=0.5",)) + group[1:],
        max_tokens=60,
        seeds=[seed_of("t0"), 1, 2, 3, seed_of("t1"), seed_of("t2"), seed_of("t3")],
    )
    assert [r.trace.completion_ids for r in again[:1] + again[4:]] == [r.trace.completion_ids for r in first]
    same_seed = _play(tiny, group[:2], max_tokens=60, seeds=[7, 7])
    assert (
        same_seed[0].trace.completion_ids == same_seed[1].trace.completion_ids
    )  # the seed is all that told them apart


def test_cancelled_negotiations_generate_nothing():
    """Ctrl-C cancels a step's negotiations: the ones unwinding must not trigger generate waves."""
    from train.policy import Batcher

    class Engine:
        calls = 0

        def grammar(self, schema):
            return None

        def generate(self, requests):
            Engine.calls += 1
            raise AssertionError("generated for a cancelled negotiation")

    batcher = Batcher(Engine(), max_wait_s=60)

    async def negotiation():
        batcher.open()
        try:
            await batcher.generate([1, 2, 3], None, 8)
        finally:
            batcher.close()

    async def main():
        tasks = [asyncio.create_task(negotiation()) for _ in range(3)]
        batcher.open()  # a fourth negotiation busy with its buyer: the wave waits for it
        await asyncio.sleep(0.01)
        assert len(batcher.pending) == 3
        for t in tasks:
            t.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results)
        batcher.close()

    asyncio.run(main())
    assert Engine.calls == 0 and batcher.pending == []


def test_ctrl_c_stops_a_generate_wave_at_once():
    """A wave is one synchronous generate call inside the step's event loop (tens of seconds on the
    270M); under plain asyncio.run, Ctrl-C waited for it to finish. Here a wave that would take 30 s
    is interrupted a moment after it starts, and the step ends with KeyboardInterrupt."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import os, signal, threading, time
        from train.policy import run_interruptibly

        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
        done = []

        async def step():
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
            end = time.monotonic() + 30
            while time.monotonic() < end:  # a generate wave: Python and torch, never yielding to the loop
                sum(range(1000))
            done.append(True)

        try:
            run_interruptibly(step())
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", "after the wave" if done else "in the wave")
        """
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "interrupted in the wave", p.stdout + p.stderr[-2000:]


def test_masked_messages_leave_only_the_action_and_terms_in_the_loss(tiny):
    """--no-train-messages: the loss mask is 0 on the words of the seller's message and 1 on
    the action and the terms (rule buyers read only the terms; the words would be gradient
    noise); the env_mask still marks every token the seller wrote."""
    from train.policy import PolicyModel, message_span

    tok = tiny[0].tokenizer
    content = 'Thanks for your interest, \\"friend\\". Here is 40.5 USD per guest.'
    text = (
        '{"action": "make_offer", "message": "' + content + '", "terms": {"price_per_guest": 55.5, "menu": "premium"}}'
    )
    a, b = message_span(text)
    assert text[a:b] == content
    ids = tok(text, add_special_tokens=False)["input_ids"]
    masked = PolicyModel(None, tok, spec="x", family="gemma", train_messages=False)._trained(ids, text)
    assert PolicyModel(None, tok, spec="x", family="gemma")._trained(ids, text) == [1] * len(ids)
    off = [i for i, m in enumerate(masked) if m == 0]
    assert off == list(range(off[0], off[-1] + 1))  # one run: the message
    words = tok.decode([ids[i] for i in off])
    assert words in content and len(words) >= len(content) - 8  # only tokens straddling a quote stay trained
    kept = tok.decode([i for i, m in zip(ids, masked, strict=False) if m])
    assert '"action": "make_offer"' in kept and '"terms": {"price_per_guest": 55.5, "menu": "premium"}}' in kept
    # An answer cut inside its message: the rest of the text is message.
    cut = text[: a + 20]
    assert message_span(cut) == (a, len(cut))

    # In a rollout: every seller turn with words has fewer trained tokens than it wrote.
    def words(turn) -> int:
        span = message_span(turn.raw_output or "")
        return span[1] - span[0] if span else 0

    worded = 0
    for r in _play(tiny, _tasks(2), train_messages=False):
        trace = r.trace
        assert len(trace.loss_mask) == len(trace.env_mask) == len(trace.completion_ids)
        assert all(lm <= em for lm, em in zip(trace.loss_mask, trace.env_mask, strict=False))
        if any(words(t) > 8 for t in r.episode.turns if t.party == "seller"):
            worded += 1
            assert sum(trace.loss_mask) < trace.seller_tokens
    assert worded


def test_messages_are_trained_by_default_only_against_llm_buyers(tmp_path):
    from train.config import resolve

    assert resolve("cpu", out=tmp_path / "a").train_messages is False  # the rule-based pool
    assert resolve("cpu", out=tmp_path / "b", buyers=["rule/linear", "openai/gpt-4o-mini"]).train_messages is True
    assert resolve("cpu", out=tmp_path / "c", train_messages=True).train_messages is True


def test_assisted_rollouts_choose_among_the_strategys_offers_and_a_group_can_choose_differently(tiny):
    """What `negotiator train` rolls out by default: the assisted seller with three candidates.
    The model's move is a choice the schema allows, so the rows of one GRPO group (one task,
    different seeds) can differ in what the reward sees."""
    from train.config import TRAIN_STRATEGY
    from train.tasks import Task

    task = Task(id="g", scenario_seed=3, buyer="rule/linear?e=1.5", seed=0)
    rollouts = _play(tiny, [task] * 4, strategy=TRAIN_STRATEGY, seeds=[11, 12, 13, 14], max_tokens=120)
    paths, several = set(), 0
    for r in rollouts:
        turns = [t for t in r.episode.turns if t.party == "seller"]
        assert turns and all(t.advice is not None for t in turns)  # every seller turn read the strategy's advice
        for t in turns:
            assert set(t.advice.options) <= {
                "A",
                "B",
                "C",
                "accept",
            }  # three candidates at most; walking away is not open
            several += sum(o in "ABC" for o in t.advice.options) > 1
            if not t.fallback:
                assert t.advice.chosen in t.advice.options
                if isinstance(t.action, MakeOffer):  # the offer is the chosen candidate's, as the advice recorded it
                    assert t.advice.chosen != "accept"
        paths.add(tuple(t.advice.chosen for t in turns))
    assert several > 0  # some moves offered the model a real choice
    assert len(paths) > 1  # and the group's rows did not all choose the same moves


DECIDE = "responsive?menu=moves&words=strategy"


def test_decision_rollouts_generate_the_move_only_and_the_strategy_writes_the_words(tiny):
    """The decision seller's rollouts (issue 29): each seller turn generates a short JSON move
    chosen from the priced moves, never a message; the message the buyer reads is the
    strategy's sentence for that move, out of the loss (environment tokens)."""
    base, _ = tiny
    rollouts = _play(tiny, _tasks(3), strategy=DECIDE, max_tokens=24)
    for r in rollouts:
        sellers = [t for t in r.episode.turns if t.party == "seller"]
        assert sellers
        for t in sellers:
            assert set(t.advice.options) <= {"hold", "step", "big_step", "final", "accept", "walk_away"}
            if not t.fallback:
                assert t.raw_output and '"message"' not in t.raw_output
                assert t.action.message  # the strategy's sentence
        generated = [i for i, m in zip(r.trace.completion_ids, r.trace.env_mask, strict=True) if m]
        assert len(generated) <= 25 * len(sellers)


def test_the_teacher_answers_with_the_recommended_move_as_a_rollout_would_record_it(tiny):
    """The imitation warm start's demonstrations: the seller agent plays the strategy's own
    move on every turn (so the episode is rule/responsive's), and the trace's trained tokens
    are exactly those answers."""
    import json

    base, _ = tiny
    (r,) = _play(tiny, _tasks(1, buyers=("rule/linear?e=1.5",)), strategy=DECIDE, teacher=True)
    sellers = [t for t in r.episode.turns if t.party == "seller"]
    assert sellers and all(t.advice.chosen == t.advice.recommended for t in sellers)
    trained = [i for i, m in zip(r.trace.completion_ids, r.trace.loss_mask, strict=True) if m]
    text = base.tokenizer.decode(trained, skip_special_tokens=True)
    answers = [json.loads(t.raw_output) for t in sellers]
    assert text.replace(" ", "") == "".join(json.dumps(a) for a in answers).replace(" ", "")
    assert [a.get("choice", a["action"]) for a in answers] == [t.advice.recommended for t in sellers]


def test_the_lookahead_teacher_makes_the_move_worth_most_when_played_out(tiny):
    """``--teacher lookahead`` (train.lookahead): each demonstrated move is the strategy's own,
    unless another open move is worth more than the teacher's margin more to the seller when
    played out against the training buyer (the strategy's moves after it); then it is the move
    worth most. Against buyers where moving differently pays it does, and the trace records
    its answers as it records the strategy teacher's."""
    import json

    from negotiator.agent.seller import parse_strategy
    from negotiator.party import PartyView, PublicMove
    from train.lookahead import MARGIN, Lookahead, open_choices
    from train.pool import BuyerPool

    pool = BuyerPool(scenario_seeds=(3, 4, 5), max_rounds=3)
    tasks = _tasks(4, buyers=("rule/hurry", "rule/threat"))
    rollouts = _play(
        tiny, tasks, strategy=DECIDE, teacher=True, lookahead=MARGIN / 2, pool=pool
    )  # a margin of its own: it reaches the teacher
    base, _ = tiny
    strategy = parse_strategy(DECIDE)
    own = 0
    for task, r in zip(tasks, rollouts, strict=True):
        expert = Lookahead(strategy, pool, task, r.episode.scenario, margin=MARGIN / 2)
        sellers = [t for t in r.episode.turns if t.party == "seller"]
        assert sellers and all(t.advice.chosen in t.advice.options for t in sellers)
        for t in sellers:
            moves = [PublicMove(party=m.party, action=m.action) for m in r.episode.turns[: t.index]]
            view = PartyView.of(r.episode.scenario, "seller", moves)
            advice = strategy.advise(view.situation())
            values = {c: asyncio.run(expert.value(view, c)) for c in open_choices(advice)}
            best, rule = max(values.values()), values[t.advice.recommended]
            if t.advice.chosen == t.advice.recommended:  # the strategy's own: nothing pays the margin more
                assert best <= rule + expert.margin + 1e-9
            else:
                own += 1
                assert values[t.advice.chosen] == pytest.approx(best) and best > rule + expert.margin
        trained = [i for i, m in zip(r.trace.completion_ids, r.trace.loss_mask, strict=True) if m]
        answers = [json.loads(t.raw_output) for t in sellers]
        assert [a.get("choice", a["action"]) for a in answers] == [t.advice.chosen for t in sellers]
        assert base.tokenizer.decode(trained, skip_special_tokens=True).replace(" ", "") == "".join(
            json.dumps(a) for a in answers
        ).replace(" ", "")
    assert own > 0  # it does not just copy the strategy


def test_the_reader_teacher_makes_the_move_of_the_strategy_reading_every_phrasing(tiny):
    """``--teacher reader`` (train.reading): each demonstrated move is the one the strategy
    makes with the talker's words read without a miss (``said_hints``), as a choice of the menu
    the model is shown (priced with the keyword reader's hints); against a buyer that says
    nothing of itself, the strategy's own move every turn. Against quoting buyers, where the
    keyword reader misses prices, it leaves the strategy's move."""
    from negotiator.agent.seller import parse_strategy
    from negotiator.buyers.talk import said_hints
    from negotiator.party import PartyView, PublicMove
    from train.pool import BuyerPool
    from train.reading import menu_choice, talker

    pool = BuyerPool(scenario_seeds=(3, 4, 5))
    tasks = _tasks(6, buyers=("rule/quote", "rule/fake_quote", "rule/linear?e=1.5"))
    rollouts = _play(tiny, tasks, strategy=DECIDE, teacher=True, reader=True, pool=pool)
    strategy = parse_strategy(DECIDE)
    own = 0
    for task, r in zip(tasks, rollouts, strict=True):
        sellers = [t for t in r.episode.turns if t.party == "seller"]
        assert sellers
        for t in sellers:
            moves = [PublicMove(party=m.party, action=m.action) for m in r.episode.turns[: t.index]]
            view = PartyView.of(r.episode.scenario, "seller", moves)
            advice = strategy.advise(view.situation())
            if talker(task) is None:
                assert t.advice.chosen == t.advice.recommended
                continue
            read = strategy.advise(
                view.situation(), hints=said_hints(r.episode.scenario, talker(task), task.seed, view)
            )
            assert t.advice.chosen == menu_choice(advice, read)
            own += t.advice.chosen != t.advice.recommended
    assert own > 0  # it reads what the keyword reader misses
    assert (talker(tasks[0]), talker(tasks[2])) == ("quote", None)


READ = "responsive?menu=readings"


def test_the_readings_menu_teacher_says_what_each_talker_said_one_trace_per_turn(tiny):
    """``--strategy 'responsive?menu=readings' --teacher reader``: each seller turn is a
    demonstration of its own (the chat is asked afresh, so each is a separate trace) whose answer
    is what the talker has said so far (``said_hints``): ``hurry`` for the hurried buyer from its
    first message on, ``quote`` for a quoting one, ``none`` for a buyer that says nothing of
    itself; the move made is the strategy's on that reading."""
    from negotiator.agent.seller import parse_strategy
    from negotiator.party import PartyView, PublicMove
    from train.pool import BuyerPool

    pool = BuyerPool(scenario_seeds=(3, 4, 5))
    tasks = _tasks(6, buyers=("rule/hurry", "rule/quote", "rule/linear?e=1.5"))
    rollouts = _play(tiny, tasks, strategy=READ, teacher=True, reader=True, pool=pool)
    strategy = parse_strategy(READ)
    tok = tiny[0].tokenizer
    said = {"rule/hurry": set(), "rule/quote": set(), "rule/linear?e=1.5": set()}
    for task, r in zip(tasks, rollouts, strict=True):
        sellers = [t for t in r.episode.turns if t.party == "seller"]
        assert len(r.turns) == len(sellers) > 0  # one trace per seller turn
        for t, trace in zip(sellers, r.turns, strict=True):
            answer = json.loads(tok.decode(trace.completion_ids, skip_special_tokens=True))
            assert sum(trace.loss_mask) == len(trace.completion_ids)  # the whole answer is trained
            moves = [PublicMove(party=m.party, action=m.action) for m in r.episode.turns[: t.index]]
            view = PartyView.of(r.episode.scenario, "seller", moves)
            advice = strategy.advise(view.situation())
            prompt = tok.decode(trace.prompt_ids, skip_special_tokens=True)
            for m in moves:  # the buyer's words are what the model reads
                if m.party == "buyer" and m.action.message:
                    assert m.action.message in prompt
            if view.situation().their_messages:
                said[task.buyer].add(answer["read"])
            move = advice.reading(answer["read"])
            assert t.guard is None  # the strategy's move on any reading is within its limits and its words
            assert (t.action.action == "accept") == move.accept
            if not move.accept:
                assert t.action.terms == move.terms, (answer, task.buyer, t.guard, t.advice)
    assert said == {"rule/hurry": {"hurry"}, "rule/quote": {"quote"}, "rule/linear?e=1.5": {"none"}}
