"""The seller agent: modes, retry with feedback, fallback, provider retries, the public API."""

from __future__ import annotations

import asyncio
import inspect
import json
import pickle

import pytest

from negotiator import MakeOffer, SellerAgent, UsageError
from negotiator.actions import Accept
from negotiator.domain import HardLimits
from negotiator.errors import ProviderError
from negotiator.models import ModelResponse, ScriptedModel, ToolCall
from negotiator.party import PartyView, PublicMove


def offer_json(terms, message="Here is my offer."):
    return json.dumps({"action": "make_offer", "message": message, "terms": terms})


async def test_json_mode_answer_becomes_the_action(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    model = ScriptedModel([offer_json(terms)])
    agent = SellerAgent(model, strategy=None, mode="json")
    turn = await agent.respond(seller_first)
    assert turn.action == MakeOffer(terms=terms, message="Here is my offer.")
    assert turn.invalid_attempts == [] and not turn.fallback and turn.guard is None
    assert turn.usage.model_calls == 1
    model.assert_consumed()
    # JSON mode asks for schema-constrained decoding and sends no tools.
    req = model.requests[0]
    assert req.tools is None and req.response_schema is not None


async def test_tool_mode_reads_the_tool_call(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    call = ModelResponse(tool_calls=[ToolCall("make_offer", json.dumps({"terms": terms, "message": "hi"}))])
    model = ScriptedModel([call], tools=True)
    agent = SellerAgent(model, strategy=None)  # auto: the model supports tools
    assert agent.mode == "tools"
    turn = await agent.respond(seller_first)
    assert turn.action == MakeOffer(terms=terms, message="hi")
    req = model.requests[0]
    # Nothing to accept yet: accept is not offered as a tool.
    assert [t["function"]["name"] for t in req.tools] == ["make_offer", "walk_away"]


async def test_retry_with_feedback_recovers_from_a_malformed_first_answer(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    bad = json.dumps({"action": "make_offer", "message": "x", "terms": {**terms, "delivery_days": 3}})
    model = ScriptedModel([bad, offer_json(terms)])
    turn = await SellerAgent(model, strategy=None, mode="json").respond(seller_first)
    assert turn.action.terms == terms and not turn.fallback
    assert len(turn.invalid_attempts) == 1
    assert "delivery_days: 3 is not an allowed option" in turn.invalid_attempts[0].error
    # The retry carried the bad answer and the feedback back to the model.
    retry = model.requests[1]
    assert retry.attempt == 1
    assert retry.messages[-2] == {"role": "assistant", "content": bad}
    assert "delivery_days: 3 is not an allowed option" in retry.messages[-1]["content"]
    assert turn.usage.model_calls == 2


async def test_retries_are_bounded_then_the_seller_falls_back_to_its_position(seller_first):
    model = ScriptedModel(["nonsense"] * 3)
    turn = await SellerAgent(model, strategy=None, mode="json", max_retries=2).respond(seller_first)
    model.assert_consumed()
    assert turn.fallback and len(turn.invalid_attempts) == 3
    # Nothing said before: the fallback opens at the seller's ideal terms.
    assert turn.action.terms == seller_first.seller.ideal(seller_first.space)


async def test_accepting_with_nothing_on_the_table_is_invalid(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    model = ScriptedModel(['{"action": "accept", "message": "deal"}', offer_json(terms)])
    turn = await SellerAgent(model, strategy=None, mode="json").respond(seller_first)
    assert "no offer from the other side" in turn.invalid_attempts[0].error
    assert isinstance(turn.action, MakeOffer)


async def test_transient_provider_errors_are_retried_with_backoff(seller_first, fast_retry):
    terms = seller_first.seller.ideal(seller_first.space)
    model = ScriptedModel(
        [ProviderError("503", transient=True), ProviderError("429", transient=True), offer_json(terms)]
    )
    turn = await SellerAgent(model, strategy=None, mode="json", retry=fast_retry).respond(seller_first)
    assert turn.action.terms == terms
    model.assert_consumed()


async def test_permanent_provider_errors_propagate(seller_first, fast_retry):
    model = ScriptedModel([ProviderError("401 bad key", transient=False)])
    with pytest.raises(ProviderError, match="401"):
        await SellerAgent(model, mode="json", retry=fast_retry).respond(seller_first)


async def test_a_slow_model_times_out_as_a_transient_error(seller_first, fast_retry):
    from negotiator.llm.graph import RetryPolicy

    model = ScriptedModel(["{}"] * 2, latency=0.5)
    policy = RetryPolicy(max_retries=1, initial_delay=0.001, timeout=0.05)
    with pytest.raises(ProviderError, match="timed out"):
        await SellerAgent(model, mode="json", retry=policy).respond(seller_first)


def test_sync_wrapper_and_transcript_checks(scenario, seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    agent = SellerAgent(ScriptedModel([offer_json(terms)]), strategy=None, mode="json")
    assert agent.respond_sync(seller_first).action.terms == terms
    with pytest.raises(UsageError, match="buyer's move"):
        agent.respond_sync(scenario)  # the buyer opens this one
    bad = [PublicMove(party="buyer", action=Accept())]
    with pytest.raises(UsageError, match="not allowed"):
        agent.respond_sync(scenario, bad)


def test_sync_calls_from_threads_share_one_loop_and_keep_their_own_limits():
    # A threaded web server calls respond_sync from many threads at once. Before, each call ran on an
    # event loop of its own (asyncio.run), so a model client bound to the loop it first ran on (LiteLLM's
    # logging worker) met other loops: "Queue ... is bound to a different event loop", "Task was destroyed
    # but it is pending!" on stderr. Now every call runs on one loop, in the caller's context.
    import contextvars
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from negotiator.domain import generate

    caller = contextvars.ContextVar("caller", default=None)
    seen: list[tuple[int, object]] = []  # (the loop a turn ran on, the caller that asked)

    def answer(request):
        seen.append((id(asyncio.get_running_loop()), caller.get()))
        return offer_json(dict(request.view.transcript[-1].action.terms))  # echoes the buyer

    agent = SellerAgent(ScriptedModel(answer), strategy=None, mode="json", limits={"minimum": {"price": 700}})
    scenario = generate(0)

    together = threading.Barrier(8)  # 8 calls at once, so from 8 threads, however fast each call is

    def ask(i: int):
        caller.set(i)
        together.wait(timeout=120)  # a guard against a hang, not a timing
        floor = 800 + 10 * i  # each caller's own limit for its negotiation, on top of the agent's
        listing = scenario.listing().model_copy(update={"seller_limits": HardLimits(minimum={"price": floor})})
        offer = {**scenario.seller.ideal(scenario.space), "price": floor}
        turn = agent.respond_sync(listing, [{"party": "buyer", "action": {"action": "make_offer", "terms": offer}}])
        return floor, turn.action.terms["price"], threading.get_ident()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(ask, range(16)))
    assert len({thread for _, _, thread in results}) == 8  # the calls came from every thread of the pool
    assert len({loop for loop, _ in seen}) == 1 and sorted(c for _, c in seen) == list(range(16))
    # The model echoed each buyer's offer at that negotiation's own floor: inside its limits, not another's.
    assert [price for _, price, _ in results] == [floor for floor, _, _ in results] == [800 + 10 * i for i in range(16)]


def test_sync_calls_work_in_a_forked_child(seller_first):
    # A pre-forking server (gunicorn --preload) forks after the parent has called respond_sync: the child
    # has the shared loop's state but not its thread, so it starts a loop of its own instead of waiting.
    import multiprocessing

    agent = SellerAgent("scripted/boulware", mode="json")
    terms = agent.respond_sync(seller_first).action.terms  # the parent's loop thread runs from here
    ctx = multiprocessing.get_context("fork")
    answers = ctx.Queue()
    child = ctx.Process(target=lambda: answers.put(agent.respond_sync(seller_first).action.terms))
    child.start()
    child.join(120)  # a guard against a hang, not a timing: a child that waited forever is killed and fails
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0 and answers.get(timeout=5) == terms


async def test_sync_wrapper_refuses_a_running_loop(seller_first):
    agent = SellerAgent(ScriptedModel([]), mode="json")
    with pytest.raises(UsageError, match="await respond"):
        agent.respond_sync(seller_first)


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="mode"):
        SellerAgent("scripted/boulware", mode="xml")
    with pytest.raises(UsageError, match="unknown scripted model"):
        SellerAgent("scripted/nope")
    with pytest.raises(UsageError, match="provider prefix"):
        SellerAgent("gpt4")
    # Wrong types are named at once; before, an AttributeError or TypeError from inside (SellerAgent(42)
    # or max_retries="2"), or at the first move, 14 frames deep (instructions=None), or never (seed="abc").
    for kwargs, words in (
        ({"model": 42}, "model must be a spec .* not int 42"),
        ({"model": None}, "model must be a spec .* not NoneType None"),
        ({"instructions": None}, r"instructions must be text \(str\), not NoneType None"),
        ({"max_retries": "2"}, "max_retries must be a whole number, 0 or more, not '2'"),
        ({"max_retries": 1.5}, "max_retries must be a whole number, 0 or more, not 1.5"),
        ({"seed": "abc"}, "seed must be a whole number or None, not 'abc'"),
        ({"seed": float("nan")}, "seed must be a whole number or None, not nan"),
        ({"limits": {"minimum": {"price": 9}, "maximum": {"price": 8}}}, "minimum price 9 is above the maximum 8"),
    ):
        with pytest.raises(UsageError, match=words):
            SellerAgent(**{"model": "scripted/boulware", **kwargs})


async def test_business_instructions_reach_the_prompt(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    model = ScriptedModel([offer_json(terms)])
    await SellerAgent(model, strategy=None, mode="json", instructions="Brand voice: Oakline, always polite.").respond(
        seller_first
    )
    assert "Brand voice: Oakline" in model.requests[0].messages[0]["content"]


async def test_concurrent_turns_share_one_agent(seller_first):
    agent = SellerAgent("scripted/boulware?latency=0.01", mode="json")
    turns = await asyncio.gather(*[agent.respond(seller_first) for _ in range(16)])
    assert len({json.dumps(t.action.terms, sort_keys=True) for t in turns}) == 1


async def test_an_agents_limits_must_leave_an_offer_inside_the_negotiations(scenario):
    # Run as a party (run_negotiation, Sessions): the listing's, the negotiation's and the agent's own
    # limits together. Before, a maximum of 800 and the agent's minimum of 900 made it offer 800.
    agent = SellerAgent("scripted/boulware", limits={"minimum": {"price": 900}})
    listing = scenario.listing()
    view = PartyView.of(
        listing,
        "seller",
        [PublicMove(party="buyer", action=MakeOffer(terms=scenario.buyer.ideal(scenario.space)))],
        HardLimits(maximum={"price": 800}),
    )
    with pytest.raises(UsageError, match="minimum price 900 is above the maximum 800"):
        await agent.act(view)
    view = PartyView.of(listing, "seller", view.transcript, HardLimits(maximum={"price": 950}))
    assert 900 <= (await agent.act(view)).action.terms["price"] <= 950


def test_respond_names_a_wrong_listing_or_transcript(scenario):
    agent = SellerAgent("scripted/boulware")
    listing = scenario.listing()
    buyer = {"party": "buyer", "action": {"action": "make_offer", "terms": scenario.buyer.ideal(scenario.space)}}
    # A dict is a listing, as Sessions.open takes it; before: AttributeError 'dict' object has no attribute 'opener'.
    assert agent.respond_sync(listing.model_dump(mode="json"), [buyer]).action.action == "make_offer"
    for bad, words in (
        (None, r"the listing must be a Listing \(or a dict of one\), not NoneType"),
        ({"id": "x"}, "invalid listing: product: Field required"),
    ):
        with pytest.raises(UsageError, match=words):
            agent.respond_sync(bad, [buyer])
    # Before: TypeError 'NoneType' object is not iterable; a string was read one character per move.
    for bad in (None, "make_offer 700", buyer):
        with pytest.raises(UsageError, match=r"transcript must be a list of moves .* not (NoneType|str|dict)"):
            agent.respond_sync(listing, bad)
    # A LangGraph app's chat messages, or a move without its party: before, "Field required", naming neither
    # the field nor what a move is.
    from langchain_core.messages import HumanMessage

    for bad, words in (
        (HumanMessage("would you take 700?"), "Input should be a valid dictionary or instance of PublicMove"),
        ({"role": "user", "content": "700?"}, r"party: Field required \(and 1 more\)"),
    ):
        with pytest.raises(UsageError, match=rf"transcript move 1 is not a move: {words}; a move is a PublicMove or "):
            agent.respond_sync(listing, [bad])


def test_an_agent_says_what_it_is_and_how_to_get_one_into_a_worker():
    agent = SellerAgent("scripted/boulware", limits={"minimum": {"price": 900}})
    assert repr(agent) == (
        "SellerAgent('scripted/boulware', strategy='responsive', mode='json', "
        "limits=HardLimits(minimum={'price': 900.0}, maximum={}, forbidden={}, min_utility=None))"
    )
    # Before: AttributeError: Can't pickle local object 'CompiledStateGraph.attach_node.<locals>._get_updates'.
    with pytest.raises(TypeError, match=r"send the spec \('scripted/boulware'\) and the limits to the worker"):
        pickle.dumps(agent)
    rebuilt = SellerAgent(agent.spec, limits=pickle.loads(pickle.dumps(agent.limits)))  # what a worker does
    assert repr(rebuilt) == repr(agent)


def test_help_names_every_argument_of_the_seller():
    # help(SellerAgent) shows an Args: entry for each parameter (before: one 16-name paragraph).
    names = [n for n in inspect.signature(SellerAgent.__init__).parameters if n != "self"]
    args = SellerAgent.__doc__.split("Args:")[1]
    assert [n for n in names if f"\n        {n}: " not in args] == []


async def test_the_seller_in_an_apps_own_graph_is_one_step_of_it(scenario, tmp_path, caplog):
    # A LangGraph app calls the seller from a node of its own checkpointed graph and interrupts for a
    # person to approve a deal. Before, the seller's turn ran as a subgraph: its internals (the seller's
    # private view with its floor, the raw model output) were checkpointed into the app's store, six
    # checkpoints a turn, and read back on resume ("Deserializing unregistered type ... will be blocked").
    from typing import TypedDict

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    agent = SellerAgent("scripted/accept", strategy=None, mode="json", limits={"minimum": {"price": 900}})
    listing = scenario.listing()

    class Deal(TypedDict, total=False):
        transcript: list
        approved: bool

    async def seller(state: Deal) -> Deal:
        turn = await agent.respond(listing, state["transcript"])
        return {"transcript": [*state["transcript"], {"party": "seller", "action": turn.action.model_dump()}]}

    def approve(state: Deal) -> Deal:
        move = state["transcript"][-1]["action"]
        return {"approved": move["action"] == "accept" and interrupt({"deal": state["transcript"][-2]["action"]})}

    g = StateGraph(Deal)
    g.add_node("seller", seller)
    g.add_node("approve", approve)
    g.add_edge(START, "seller")
    g.add_edge("seller", "approve")
    g.add_edge("approve", END)
    terms = scenario.buyer.ideal(scenario.space)
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "app.sqlite")) as saver:
        app = g.compile(checkpointer=saver)
        for thread, price in (("above", 950), ("below", 850)):
            offer = {"party": "buyer", "action": {"action": "make_offer", "terms": {**terms, "price": price}}}
            out = await app.ainvoke({"transcript": [offer]}, {"configurable": {"thread_id": thread}})
            if price >= 900:  # the seller accepts: the graph waits for a person
                assert out["__interrupt__"][0].value == {"deal": offer["action"]}
                out = await app.ainvoke(Command(resume=True), {"configurable": {"thread_id": thread}})
                assert out["approved"] is True and out["transcript"][-1]["action"]["action"] == "accept"
            else:  # an accept below the floor: the guard made it a counter-offer, nothing to approve
                assert out["approved"] is False and out["transcript"][-1]["action"]["terms"]["price"] >= 900
        cur = await saver.conn.execute("SELECT DISTINCT checkpoint_ns FROM checkpoints")
        assert await cur.fetchall() == [("",)]  # the app's own graph only, none of the seller's turn
    assert len(agent.model.requests) == 2  # one model call a turn: resuming did not ask the seller again
    assert "unregistered type" not in caplog.text


async def test_a_callers_recursion_limit_does_not_cut_the_sellers_retries(seller_first):
    # An app's graph sets a small recursion_limit for its own steps; the seller's turn, run from one of its
    # nodes, inherited it. Before, a turn whose model needed a retry raised GraphRecursionError ("Recursion
    # limit of 2 reached") in the app instead of retrying, or falling back once the retries were spent.
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class Turn(TypedDict, total=False):
        invalid: int
        fallback: bool

    for spec, retries, invalid, fallback in (("scripted/malformed", 2, 1, False), ("scripted/garbage", 6, 7, True)):
        agent = SellerAgent(spec, strategy=None, mode="json", max_retries=retries)

        async def seller(state: Turn, agent=agent) -> Turn:
            turn = await agent.respond(seller_first)
            return {"invalid": len(turn.invalid_attempts), "fallback": turn.fallback}

        g = StateGraph(Turn)
        g.add_node("seller", seller)
        g.add_edge(START, "seller")
        g.add_edge("seller", END)
        out = await g.compile().ainvoke({}, {"recursion_limit": 2})  # the least a one-node graph runs with
        assert out == {"invalid": invalid, "fallback": fallback}
