"""Bring your own opponent: a party from a separate, pip-installed package, found through the
``negotiator.parties`` entry points and as ``module:factory``, runs through `negotiator eval`
(pre-flight, the episode log, --resume, on_end) and `negotiator report`; docs/plugins.md's
example runs as written; the OutcomeSpace helpers a party offers with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals.runner import check_spec
from negotiator import UsageError
from negotiator.models.specs import parse_spec
from negotiator.plugins import registered
from negotiator.sim import InvalidOffer, generate, make_party, read_episodes, run_negotiation

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_SRC = Path(__file__).resolve().parent / "plugins"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    """tests/plugins installed by pip into a folder of its own (its .dist-info carries the entry points)."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    source = shutil.copytree(
        PLUGIN_SRC, build / "src", ignore=shutil.ignore_patterns("build", "*.egg-info")
    )  # setuptools writes beside it
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=build,
        env={**os.environ, "PIP_NO_CACHE_DIR": "1"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(target.glob("aspiration_parties-*.dist-info/entry_points.txt"))
    return target


@pytest.fixture
def on_path(plugin_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_dir))
    registered.cache_clear()
    yield plugin_dir
    sys.modules.pop("aspiration_parties", None)
    registered.cache_clear()


def env_with(plugin_dir: Path, **extra) -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(ROOT)]), **extra}


def test_registered_names_come_from_the_installed_distributions_entry_points(on_path):
    eps = registered()
    assert {"aspiration/buyer", "aspiration/fixed-seller"} <= eps.keys()
    assert eps["aspiration/buyer"].dist.name == "aspiration-parties"
    assert parse_spec("aspiration/buyer?exponent=3").kind == "plugin"
    assert parse_spec("aspiration_parties:buyer").kind == "plugin"
    assert parse_spec("openai/gpt-4o-mini").kind == "litellm"  # a model is still a model
    registered.cache_clear()
    sys.path.remove(str(on_path))
    assert parse_spec("aspiration/buyer").kind == "litellm"  # not installed: the name is not registered


@pytest.mark.parametrize(
    ("spec", "role", "says"),
    [
        ("no_such_module_xyz:make", "buyer", "cannot import no_such_module_xyz (ModuleNotFoundError"),
        ("aspiration_parties:missing", "buyer", "aspiration_parties has no attribute 'missing'"),
        ("aspiration/buyer", "seller", "its factory raised ValueError: aspiration/buyer plays the buyer"),
        ("aspiration/buyer?colour=red", "buyer", "its factory does not take (role=..., seed=..., colour=...)"),
        ("json:loads", "buyer", "its factory does not take"),
        ("os:getcwd", "buyer", "its factory does not take"),
        (
            "aspiration/buyerr",
            "buyer",
            "'aspiration' is not a LiteLLM provider, and no installed package registers 'aspiration/buyerr'",
        ),
    ],
)
def test_a_broken_plugin_fails_before_any_negotiation_with_a_message_that_says_what(on_path, spec, role, says):
    with pytest.raises(UsageError) as e:
        check_spec(spec, role)
    assert says in str(e.value)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            "pt_raises:make",
            "importing pt_raises raised RuntimeError: no config file; fix the module or install what it needs",
        ),
        (
            "pt_needs:make",
            "importing pt_needs raised ModuleNotFoundError: No module named 'not_installed_xyz'; fix the module",
        ),
        ("pt_typed:make?n=3", 'its factory raised TypeError: can only concatenate str (not "int") to str (spec '),
        ("pt_typed:make?seed=4", "?seed= is not the spec's to give: negotiator passes every factory role="),
        ("pt_typed:make?role=seller", "?role= is not the spec's to give"),
        ("json:loads", "its factory does not take (role=..., seed=...) as keyword arguments"),
    ],
)
def test_what_a_plugin_author_gets_wrong_is_named_as_it_is(tmp_path, monkeypatch, spec, says):
    """A module that raises on import once read "cannot import ...; is it installed?", a TypeError
    inside the factory (a ?param used as a number) once read "its factory does not take (..., n=...)",
    and ?seed= "does not take (role=..., seed=..., seed=...)": each now says what happened."""
    (tmp_path / "pt_raises.py").write_text("raise RuntimeError('no config file')\n")
    (tmp_path / "pt_needs.py").write_text("import not_installed_xyz\n")
    (tmp_path / "pt_typed.py").write_text("def make(role, seed=0, n=3):\n    return n + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as e:
        check_spec(spec, "buyer")
    assert says in str(e.value)


def test_a_package_that_registers_a_built_in_name_is_told_it_cannot(on_path):
    """`--buyer rule/aspiration`, which an installed package registers, once said only "unknown rule
    strategy 'aspiration'": the package's author was never told why the registration did nothing."""
    from negotiator.sim import make_party

    assert "rule/aspiration" not in registered()
    says = (
        "unknown rule strategy 'aspiration'; choose one of boulware, linear, conceder, tit_for_tat, hardliner",
        "aspiration-parties registers 'rule/aspiration' (aspiration_parties:buyer) as a party, but rule/, "
        "scripted/, local/, mcp+, a2a+ and human are negotiator's own: register it under a name of the package's own",
    )
    for build in (lambda: check_spec("rule/aspiration", "buyer"), lambda: make_party("rule/aspiration", "buyer")):
        with pytest.raises(UsageError) as e:
            build()
        assert all(part in str(e.value) for part in says), str(e.value)
    with pytest.raises(UsageError) as e:
        check_spec("rule/nosuch", "buyer")
    assert "registers" not in str(e.value)  # no package registers that one


def test_a_registered_built_in_name_is_told_once_where_the_check_builds_the_party(monkeypatch):
    """`--buyer scripted/mine` (or local/...), which a package registers: the eval's check builds the party with
    make_party, and each added the same hint, so the error said it twice."""
    from types import SimpleNamespace

    from negotiator import plugins
    from negotiator.sim import make_party

    mine = SimpleNamespace(name="scripted/mine", value="mylib:make", dist=SimpleNamespace(name="mylib"))
    monkeypatch.setattr(plugins, "_entry_points", lambda: [mine])
    hint = "mylib registers 'scripted/mine' (mylib:make) as a party, but rule/, scripted/, local/, mcp+, a2a+ and human"
    for build in (lambda: check_spec("scripted/mine", "buyer"), lambda: make_party("scripted/mine", "buyer")):
        with pytest.raises(UsageError) as e:
            build()
        assert str(e.value).startswith("unknown scripted model 'mine'; choose one of ")
        assert str(e.value).count(hint) == 1, str(e.value)


def test_an_unknown_registered_name_lists_the_installed_ones(on_path):
    with pytest.raises(
        UsageError, match=r"entry points negotiator\.parties: aspiration/buyer, aspiration/fixed-seller"
    ):
        check_spec("aspiration/typo", "buyer")


async def test_on_end_gets_the_outcome_and_the_view_names_the_negotiation(on_path, tmp_path, monkeypatch):
    log = tmp_path / "ends.jsonl"
    monkeypatch.setenv("ASPIRATION_LOG", str(log))
    scenario = generate(3, "furniture")
    buyer, seller = (
        make_party("aspiration/buyer", "buyer"),
        make_party("aspiration_parties:fixed_seller?floor=0.55", "seller"),
    )
    assert buyer.spec == "aspiration/buyer" and buyer.family == "aspiration"
    ep = await run_negotiation(seller, buyer, scenario, episode_id_="neg-1")
    assert ep.error is None and ep.seller.spec == "aspiration_parties:fixed_seller?floor=0.55"
    ends = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(e["role"] for e in ends) == ["buyer", "seller"]
    assert all(
        e["negotiation_id"] == "neg-1" and e["deal"] == ep.outcome.deal and e["ended_by"] == ep.outcome.ended_by
        for e in ends
    )


async def test_a_failing_on_end_is_kept_on_the_episode_and_a_bad_act_is_an_error_episode():
    from negotiator import Accept

    class Grumpy:
        def __init__(self, bad_act: bool):
            self.spec, self.family, self.role, self.bad_act = "grumpy", "x", "buyer", bad_act

        async def act(self, view):
            if self.bad_act:
                return "accept"
            from negotiator import MakeOffer

            return MakeOffer(terms=view.space.grid(2)[0]) if view.standing_offer is None else Accept()

        def on_end(self, outcome):
            raise RuntimeError("books closed")

        async def aclose(self):
            pass

    from negotiator.plugins import PluginParty

    scenario = generate(1, "furniture")
    ep = await run_negotiation(
        make_party("rule/boulware", "seller"), PluginParty(Grumpy(False), "grumpy", "buyer"), scenario
    )
    assert ep.error is None and ep.outcome.ended_by in ("accept", "deadline", "walk_away")
    assert ep.labels["on_end_error"] == {"buyer": "RuntimeError: books closed"}
    bad = await run_negotiation(
        make_party("rule/boulware", "seller"), PluginParty(Grumpy(True), "grumpy", "buyer"), scenario
    )
    assert (
        bad.outcome.ended_by == "error" and "act() returned str; return a TurnRecord or an action" in bad.error.message
    )


async def test_a_plugin_that_offers_nan_is_an_error_episode_that_says_so_in_one_line():
    """A plugin's MakeOffer(terms={"price": nan}) once left pydantic's four-line error on the episode."""
    from negotiator import MakeOffer
    from negotiator.plugins import PluginParty

    class NotANumber:
        def act(self, view):
            return MakeOffer(terms={**view.space.grid(2)[0], "price": float("nan")})

    scenario = generate(1, "furniture")
    ep = await run_negotiation(
        make_party("rule/boulware", "seller"), PluginParty(NotANumber(), "nan-buyer", "buyer"), scenario
    )
    assert ep.outcome.ended_by == "error" and ep.error.party == "buyer" and ep.error.type == "ValueError"
    assert ep.error.message == "nan-buyer: act() built an invalid action: terms.price: must be a finite number, got nan"


def cli(plugin_dir: Path, *args: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env_with(plugin_dir, **env),
    )


def test_plugin_parties_run_through_eval_resume_and_report(plugin_dir, tmp_path):
    """An entry-point buyer against a module:factory seller: 6 negotiations logged; two lost
    lines are played again by --resume to the very same outcomes; the report reads the run."""
    out, ends = tmp_path / "run", tmp_path / "ends.jsonl"
    args = (
        "eval",
        "--suite",
        "quick",
        "--buyer",
        "aspiration/buyer",
        "--seller",
        "aspiration_parties:fixed_seller?floor=0.55",
        "--out",
        str(out),
        "--quiet",
    )
    r = cli(plugin_dir, *args, cwd=tmp_path, ASPIRATION_LOG=str(ends))
    assert r.returncode == 0, r.stdout + r.stderr
    first = {e.episode_id: e for e in read_episodes(out / "episodes.jsonl")}
    assert len(first) == 6 and all(e.error is None for e in first.values())
    assert {e.buyer.spec for e in first.values()} == {"aspiration/buyer"}
    assert {e.outcome.ended_by for e in first.values()} <= {"accept", "walk_away", "deadline"}
    ended = [json.loads(line) for line in ends.read_text().splitlines()]
    assert sorted(e["negotiation_id"] for e in ended if e["role"] == "buyer") == sorted(
        first
    )  # on_end once per negotiation

    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text("\n".join(lines[:4]) + "\n")  # a crash lost the last two
    r = cli(plugin_dir, "eval", "--resume", str(out), "--quiet", cwd=tmp_path, ASPIRATION_LOG=str(ends))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 of 6 negotiations already done" in r.stdout
    again = {e.episode_id: e for e in read_episodes(out / "episodes.jsonl")}
    assert again.keys() == first.keys()
    for eid, ep in again.items():
        assert ep.outcome == first[eid].outcome and [t.action for t in ep.turns] == [t.action for t in first[eid].turns]

    r = cli(plugin_dir, "report", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6" in r.stdout and "aspiration_parties:fixed_seller" in r.stdout.replace("\n", "")


def test_an_unknown_party_name_is_a_usage_error_from_the_cli(plugin_dir, tmp_path):
    r = cli(
        plugin_dir,
        "eval",
        "--suite",
        "quick",
        "--buyer",
        "aspiration/buyerr",
        "--seller",
        "rule/boulware",
        "--out",
        str(tmp_path / "x"),
        "--quiet",
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no installed package registers 'aspiration/buyerr'" in re.sub(r"\s+", " ", r.stdout + r.stderr)
    assert not (tmp_path / "x" / "episodes.jsonl").exists()


def test_the_cli_error_shows_the_spec_as_written_not_as_an_emoji(plugin_dir, tmp_path):
    """`party noact:X: its factory ...` once read `party noact❌ its factory ...`: rich took `:X:` for
    an emoji code. Nothing the CLI prints (specs, paths, a buyer's message) becomes an emoji."""
    (tmp_path / "noact.py").write_text("class X:\n    def __init__(self, role, seed=0):\n        pass\n")
    args = ("eval", "--buyer", "noact:X", "--seller", "rule/boulware", "--limit", "1", "--out", str(tmp_path / "x"))
    r = cli(plugin_dir, *args, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    said = re.sub(r"\s+", " ", r.stderr)
    assert "error: party noact:X: its factory returned X, which has no act(view) method" in said, said
    assert "\u274c" not in said


# --- docs/plugins.md ------------------------------------------------------------------


def test_the_write_your_own_buyer_example_runs_as_written(tmp_path):
    text = (ROOT / "docs" / "plugins.md").read_text()
    python = re.findall(r"```python\n(.*?)```", text, re.S)
    bash = re.findall(r"```bash\n(.*?)```", text, re.S)
    (tmp_path / "my_buyer.py").write_text(python[0])
    negotiator = str(Path(sys.executable).parent / "negotiator")
    for line in bash[0].strip().splitlines():
        args = line.split()
        assert args[0] == "negotiator"
        r = subprocess.run(
            [negotiator, *args[1:]],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert r.returncode == 0, line + "\n" + r.stdout + r.stderr
    episodes = read_episodes(tmp_path / "runs" / "my-buyer" / "episodes.jsonl")
    assert len(episodes) == 6 and all(e.error is None and e.buyer.spec == "my_buyer:LinearBuyer" for e in episodes)
    ends = [json.loads(line) for line in (tmp_path / "my_buyer_outcomes.jsonl").read_text().splitlines()]
    assert sorted(e["negotiation"] for e in ends) == sorted(e.episode_id for e in episodes)
    assert [e["deal"] for e in sorted(ends, key=lambda e: e["negotiation"])] == [
        e.outcome.deal for e in sorted(episodes, key=lambda e: e.episode_id)
    ]

    shown = subprocess.run([sys.executable, "-c", python[1]], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[:7] == [
        "['price', 'warranty_months', 'inspection', 'financing']",
        "[0, 3, 6, 12]",
        "353",
        "[17550, 17600, 17650]",
        "20000",
        "12",
        "cash",
    ]  # what the comments in the example say


# --- OutcomeSpace helpers ---------------------------------------------------------------


def test_outcome_space_lists_an_issues_values_and_normalises_onto_them():
    space = generate(0, "used_car").public().space
    price = space.issue("price")
    grid = space.values("price")
    assert len(grid) == price.size == int((price.high - price.low) / price.step) + 1
    assert (
        grid[0] == price.low
        and grid[-1] == price.high
        and all(b - a == price.step for a, b in zip(grid, grid[1:], strict=False))
    )
    assert space.values("warranty_months") == [0, 3, 6, 12]
    assert space.normalise("price", "20,010") == 20000
    assert space.normalise("price", -5) == price.low and space.normalise("price", 1e12) == price.high
    assert space.normalise("warranty_months", 11) == 12 and space.normalise("warranty_months", "6") == 6
    assert space.normalise("inspection", " Safety_Check ") == "safety_check"
    for bad in (float("nan"), float("inf"), "cheap", True):
        with pytest.raises(InvalidOffer, match="price: must be a number"):
            space.normalise("price", bad)
    with pytest.raises(
        InvalidOffer, match=r"financing: 'lease' is not an allowed option; choose one of 'cash', 'dealer_financing'"
    ):
        space.normalise("financing", "lease")
    with pytest.raises(InvalidOffer, match="colour: unknown issue"):
        space.values("colour")
    terms = space.normalise_offer(
        {"financing": "CASH", "price": 20024.9, "warranty_months": 3.0, "inspection": "as_is"}
    )
    assert terms == {"price": 20000, "warranty_months": 3, "inspection": "as_is", "financing": "cash"}
    assert space.problems(terms) == {} and list(terms) == space.names
    with pytest.raises(InvalidOffer) as e:
        space.normalise_offer({"price": 1, "colour": "red"})
    assert set(e.value.problems) == {"colour", "warranty_months", "inspection", "financing"}


async def test_a_plugin_seller_in_the_session_service_sees_the_session_id(on_path):
    from langgraph.checkpoint.memory import InMemorySaver

    from negotiator import BuyerMove, Sessions

    seen: list[str] = []
    seller = make_party("aspiration_parties:fixed_seller", "seller")
    act = seller.inner.act

    async def spy(view):
        seen.append(view.negotiation_id)
        return await act(view)

    seller.inner.act = spy
    sessions = Sessions(seller, InMemorySaver())
    scenario = generate(2, "furniture")
    opened = await sessions.open(scenario.listing())
    await sessions.move(opened.id, BuyerMove.offer(scenario.space.grid(2)[0], "a first offer"))
    assert seen and set(seen) == {opened.id}


class GiveItAway:
    """A plugin seller that would give everything away: it offers the buyer's best terms and
    accepts whatever the buyer offers."""

    def act(self, view):
        from negotiator import Accept, MakeOffer

        if view.standing_offer is not None:
            return Accept(message="Sure.")
        return MakeOffer(terms=min(view.space.grid(5), key=view.utility), message="Take it.")


async def test_the_guard_holds_a_plugin_seller_to_its_floor_whatever_it_returns():
    """A plugin seller once sold below its reservation in every negotiation of an eval (the
    summary said "6 deals below the floor"): its moves passed no guard. Its offers are now
    repaired and its accepts of terms below the floor blocked, as a model's are."""
    from negotiator.plugins import PluginParty

    for seed in range(3):
        scenario = generate(seed, "furniture")
        seller = PluginParty(GiveItAway(), "give-away", "seller")
        ep = await run_negotiation(seller, make_party("rule/conceder", "buyer", seed=seed), scenario, seed=seed)
        floor = scenario.seller.reservation
        assert ep.error is None
        assert not ep.outcome.deal or ep.metrics.seller_utility >= floor
        mine = [t for t in ep.turns if t.party == "seller"]
        offers = [t.action.terms for t in mine if t.action.action == "make_offer"]
        assert offers and all(scenario.seller.utility(o) >= floor for o in offers)
        kinds = {k for t in mine if t.guard for k in t.guard.kinds}
        assert kinds and kinds <= {"offer_repaired", "accept_blocked"}  # its words are never checked as a model's
        for t in mine:  # ... but words that spoke of terms the guard took off the table go with them
            said = {None: ("Take it.", "Sure."), "offer_repaired": ("Here is my offer.",)}
            said["accept_blocked"] = ("I can't accept those terms, but I can offer this.",)
            assert t.action.message in said[t.guard.kinds[0] if t.guard else None], (t.guard, t.action.message)


async def test_a_plugin_seller_in_the_service_keeps_the_businesss_hard_limits():
    """`negotiator serve --seller PLUGIN`: a buyer's 507 once closed a deal under a hard minimum of 900."""
    from langgraph.checkpoint.memory import InMemorySaver

    from negotiator import BuyerMove, Sessions
    from negotiator.plugins import PluginParty

    sessions = Sessions(PluginParty(GiveItAway(), "give-away", "seller"), InMemorySaver())
    scenario = generate(0)
    opened = await sessions.open(scenario.listing(), limits={"minimum": {"price": 900}})
    offer = scenario.buyer.ideal(scenario.space)
    assert offer["price"] < 900
    state = await sessions.move(opened.id, BuyerMove.offer(offer, "Deal at this?"))
    assert state.status == "open" and state.agreement is None
    assert state.seller_offer is not None and state.seller_offer["price"] >= 900
    (turn,) = await sessions.seller_turns(opened.id)
    assert turn.guard is not None and turn.guard.kinds == ["accept_blocked"]


class _AppSeller:
    """A seller an app writes as a Party of its own and passes in, no plugin registry involved."""

    spec, family, role = "app/give-away", "app", "seller"

    async def act(self, view):
        from negotiator.party import TurnRecord

        return TurnRecord(index=view.turn, party="seller", action=GiveItAway().act(view))

    async def aclose(self):
        return None


async def test_a_party_an_app_passes_in_keeps_the_sellers_limits_too():
    """Only plugin parties were held to the limits: a Party object given to run_negotiation or to
    Sessions (the Python API's way) sold below the floor and under the business's hard minimum."""
    from langgraph.checkpoint.memory import InMemorySaver

    from negotiator import BuyerMove, Sessions

    scenario = generate(0, "furniture")
    ep = await run_negotiation(_AppSeller(), make_party("rule/conceder", "buyer", seed=0), scenario, seed=0)
    assert ep.error is None and (not ep.outcome.deal or ep.metrics.seller_utility >= scenario.seller.reservation)
    offers = [t.action.terms for t in ep.turns if t.party == "seller" and t.action.action == "make_offer"]
    assert offers and all(scenario.seller.utility(o) >= scenario.seller.reservation for o in offers)
    assert any(t.guard is not None for t in ep.turns if t.party == "seller")

    sessions = Sessions(_AppSeller(), InMemorySaver())
    listing = generate(0).listing()
    opened = await sessions.open(listing, limits={"minimum": {"price": 900}})
    state = await sessions.move(opened.id, BuyerMove.offer(generate(0).buyer.ideal(listing.space), "Deal at this?"))
    assert state.status == "open" and state.seller_offer is not None and state.seller_offer["price"] >= 900


async def test_a_plugin_that_never_answers_ends_its_negotiation_not_the_batch():
    """An async act() that hung kept `negotiator eval` waiting for ever, without a word."""
    import asyncio

    from negotiator import MakeOffer
    from negotiator.plugins import MOVE_TIMEOUT, PluginParty

    class Stuck:
        move_timeout = 0.01

        async def act(self, view):
            await asyncio.Event().wait()  # nothing ever sets it

    class OwnTimeout:  # a TimeoutError of its own (its HTTP client's) is told as it is
        async def act(self, view):
            raise TimeoutError("my pricing service timed out")

    class Fine:
        async def act(self, view):
            return MakeOffer(terms=view.space.grid(2)[0])

    scenario = generate(1, "furniture")
    ep = await run_negotiation(make_party("rule/boulware", "seller"), PluginParty(Stuck(), "stuck", "buyer"), scenario)
    assert ep.outcome.ended_by == "error" and ep.error.party == "buyer" and ep.error.type == "TimeoutError"
    assert ep.error.message.startswith("stuck: act() did not answer within 0.01 s; make the move faster")
    ep = await run_negotiation(
        make_party("rule/boulware", "seller"), PluginParty(OwnTimeout(), "own", "buyer"), scenario
    )
    assert ep.error.message == "my pricing service timed out"
    assert PluginParty(Fine(), "fine", "buyer").move_timeout == MOVE_TIMEOUT == 120


@pytest.mark.parametrize("seconds", ["float('nan')", "float('inf')", "0", "-1", "'30'", "True"])
def test_a_plugin_move_timeout_that_is_no_number_of_seconds_stops_the_run_before_it_starts(seconds):
    """move_timeout = nan, 0 or -1 once ended every negotiation in "did not answer within nan s", and '30' in a
    TypeError, one error episode each; inf waited for ever, which is None's to say."""
    from negotiator.plugins import PluginParty

    class Slow:
        move_timeout = eval(seconds)

        async def act(self, view):
            return None

    with pytest.raises(UsageError) as e:
        PluginParty(Slow(), "pt_slow:make", "buyer")
    assert str(e.value) == (
        f"party pt_slow:make: move_timeout must be a positive number of seconds, or None to wait for ever, "
        f"not {eval(seconds)!r}"
    )


def test_a_broken_move_timeout_stops_eval_before_any_negotiation(tmp_path, monkeypatch):
    (tmp_path / "pt_slow.py").write_text(
        "from negotiator import WalkAway\n\nclass make:\n    move_timeout = float('nan')\n\n"
        "    def __init__(self, role, seed=0):\n        pass\n\n    async def act(self, view):\n        return WalkAway()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match=r"^party pt_slow:make: move_timeout must be a positive number"):
        check_spec("pt_slow:make", "buyer")


def test_a_plugin_party_refuses_a_base_url_it_would_never_use(tmp_path, monkeypatch):
    """`negotiator eval --seller PLUGIN --seller-base-url URL` ran without a word while the URL went
    nowhere (a rule seller is refused); a training pool gives a plugin buyer none."""
    from negotiator.sim import make_party
    from train.pool import BuyerPool

    (tmp_path / "pt_party.py").write_text(
        "from negotiator import WalkAway\n\nclass make:\n    def __init__(self, role, seed=0):\n        pass\n\n"
        "    def act(self, view):\n        return WalkAway()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match="pt_party:make is a plugin party: it takes no base URL"):
        make_party("pt_party:make", "seller", base_url="http://127.0.0.1:9")
    mixed = BuyerPool(buyers=("pt_party:make", "hosted_vllm/m"), scenario_seeds=(0,), buyer_base_url="http://h:1")
    assert mixed.base_url("pt_party:make") is None and mixed.base_url("hosted_vllm/m") == "http://h:1"
    assert mixed.buyer("pt_party:make", "neutral", 0).spec == "pt_party:make"
    with pytest.raises(UsageError, match="every training buyer here is rule-based or a plugin: add --buyer"):
        BuyerPool(buyers=("pt_party:make", "rule/boulware"), scenario_seeds=(0,), buyer_base_url="http://h:1")


def test_an_eval_whose_every_negotiation_failed_on_a_plugins_bug_exits_1(plugin_dir, tmp_path):
    """Every negotiation ending in the plugin's exception once exited 0, as a run that worked; only
    provider errors exited non-zero (3). One that fails sometimes still exits 0, its errors listed."""
    (tmp_path / "pt_flaky.py").write_text(
        "from negotiator import WalkAway\n\nclass make:\n    def __init__(self, role, seed=0, always='1'):\n"
        "        self.always = always == '1'\n\n    def act(self, view):\n"
        "        if self.always or view.scenario.id.startswith('furniture'):\n"
        "            raise KeyError('price_table')\n        return WalkAway()\n"
    )
    common = ("--seller", "rule/boulware", "--limit", "3", "--quiet")
    r = cli(plugin_dir, "eval", "--buyer", "pt_flaky:make", *common, "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    said = re.sub(r"\s+", " ", r.stdout)
    assert "3 negotiations ended in an error" in said and "every negotiation failed: 'price_table'" in said
    r = cli(
        plugin_dir, "eval", "--buyer", "pt_flaky:make?always=0", *common, "--out", str(tmp_path / "b"), cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    said = re.sub(r"\s+", " ", r.stdout)
    assert "ended in an error" in said and "every negotiation failed" not in said
