"""Finite numbers at every boundary: NaN and infinities in limits, listings and offers are
refused with an error that names the field; extreme finite values never crash the seller and
never get a deal below the business's limits (property tests with hypothesis)."""

from __future__ import annotations

import json
import math
import sys

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

from negotiator import SellerAgent
from negotiator.actions import Accept, MakeOffer, parse_text_action
from negotiator.domain.issues import NumericIssue
from negotiator.domain.scenario import HardLimits, Listing
from negotiator.domain.utility import LinearValue, Preferences
from negotiator.errors import InvalidOffer, UsageError
from negotiator.party import PublicMove
from negotiator.service import ServiceSettings, create_app
from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate

KEY = "finite-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}", "content-type": "application/json"}
NON_FINITE = [math.nan, math.inf, -math.inf, 10**400]
EXTREMES = [1e300, -1e300, sys.float_info.max, -sys.float_info.max, 5e-324, -5e-324, 0.0, -0.0, 2**63, 10**18]
# Everything a JSON body or a Python caller can put where a number belongs.
numbers = st.one_of(
    st.sampled_from(NON_FINITE + EXTREMES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
)
PROPERTY = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _listing_json(seed: int = 0) -> dict:
    return generate(seed).listing().model_dump(mode="json")


def _body(obj) -> str:
    return json.dumps(obj)  # writes NaN / Infinity / -Infinity, as a careless or hostile client would


def _buyer_terms(price, seed: int = 0) -> dict:
    sc = generate(seed)
    return {**sc.buyer.ideal(sc.space), "price": price}


# --- the reproductions: each was accepted (or a 500) before ---------------------------

LISTING_POISONS = [
    (("seller", "weights", "price"), math.nan, "seller.weights.price"),
    (("seller", "values", "price", "best"), math.inf, "seller.values.price.linear.best"),
    (("issues", 0, "step"), math.nan, "issues.0.numeric.step"),
    (("issues", 0, "high"), math.inf, "issues.0.numeric.high"),
    (("seller", "reservation"), math.nan, "seller.reservation"),
    (("seller", "values", "delivery_days", "values", "7"), math.nan, "seller.values.delivery_days.table.values.7"),
    (("seller_limits", "minimum", "price"), math.nan, "seller_limits.minimum.price"),
    (("product", "list_price"), -math.inf, "product.list_price"),
]


def _poison(listing: dict, path: tuple, value) -> dict:
    node = listing
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return listing


@pytest.fixture
def client(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/hostile", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e309", "1" + "0" * 400])
def test_a_non_finite_limit_is_a_422_that_names_the_field(client, value):
    r = client.post(
        "/v1/negotiations",
        content='{"seed": 0, "template": "furniture", "limits": {"minimum": {"price": ' + value + "}}}",
        headers=AUTH,
    )
    assert r.status_code == 422, r.text
    assert r.json()["message"].startswith("body.limits.minimum.price: Input should be a"), r.json()


def test_a_nan_floor_no_longer_lets_a_deal_below_the_listings_floor(client):
    """The reported attack: NaN as the floor, then a low offer to a seller that accepts anything."""
    r = client.post(
        "/v1/negotiations", content='{"seed":0,"template":"furniture","limits":{"minimum":{"price":NaN}}}', headers=AUTH
    )
    assert r.status_code == 422
    # The listing's own floor (614) holds with finite limits against the same compromised seller.
    sid = client.post("/v1/negotiations", json={"seed": 0, "template": "furniture"}, headers=AUTH).json()["id"]
    st_ = client.post(
        f"/v1/negotiations/{sid}/moves", json={"action": "offer", "terms": _buyer_terms(550)}, headers=AUTH
    ).json()
    assert st_["status"] == "open" and st_["transcript"][-1]["action"]["terms"]["price"] >= 614


@pytest.mark.parametrize("path, value, where", LISTING_POISONS, ids=[w for _, _, w in LISTING_POISONS])
def test_a_listing_with_a_non_finite_number_is_refused_not_a_500_later(client, path, value, where):
    r = client.post("/v1/negotiations", content=_body({"listing": _poison(_listing_json(), path, value)}), headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["message"].startswith(f"body.listing.{where}: "), r.json()


@pytest.mark.parametrize("price", ["NaN", "Infinity", "-1e999", "1" + "0" * 400])
def test_a_non_finite_buyer_offer_is_a_422(client, price):
    sid = client.post("/v1/negotiations", json={"seed": 0}, headers=AUTH).json()["id"]
    terms = json.dumps(_buyer_terms(0)).replace('"price": 0', f'"price": {price}')
    r = client.post(
        f"/v1/negotiations/{sid}/moves", content='{"action": "offer", "terms": ' + terms + "}", headers=AUTH
    )
    assert r.status_code == 422 and "body.terms.price" in r.json()["message"] and "finite" in r.json()["message"], (
        r.text
    )
    assert client.get(f"/v1/negotiations/{sid}", headers=AUTH).json()["turn"] == 0


@pytest.mark.parametrize(
    "limits, says",
    [
        ({"minimum": {"price": 1e300}}, "is above the issue's range 507..1014 USD: nothing could be offered"),
        ({"maximum": {"price": -1e300}}, "is below the issue's range 507..1014"),
        ({"minimum": {"price": 900}, "maximum": {"price": 800}}, "minimum price 900 is above the maximum 800"),
        ({"minimum": {"price": -1e308}, "maximum": {"price": 1e308}}, None),  # harmless: the listing's own floor holds
    ],
)
def test_extreme_finite_limits_are_answered_not_crashed(client, limits, says):
    r = client.post("/v1/negotiations", json={"seed": 0, "limits": limits}, headers=AUTH)
    if says is None:
        assert r.status_code == 201, r.text
        r = client.post(
            f"/v1/negotiations/{r.json()['id']}/moves",
            json={"action": "offer", "terms": _buyer_terms(510)},
            headers=AUTH,
        )
        assert r.status_code == 200 and r.json()["transcript"][-1]["action"]["terms"]["price"] >= 614
    else:
        assert r.status_code == 422 and says in r.json()["message"], r.text


@pytest.mark.parametrize(
    "issue, says",
    [
        ({"low": 0, "high": 1000, "step": 1e300}, "must not exceed the range"),
        ({"low": 0, "high": 1e10, "step": 5e-324}, "is too small for the range"),
        ({"low": -sys.float_info.max, "high": sys.float_info.max}, "must lie within"),
        # Accepted before, then the first move failed building the grid (OverflowError, a 500 after a 201).
        ({"low": 1e300, "high": 1.7e308}, "must lie within ±1e\\+15, got 1e\\+300..1.7e\\+308"),
        ({"low": 0, "high": 1e15, "step": 0.5}, "more than 1e\\+15 steps"),
    ],
)
def test_extreme_issues_are_refused_with_a_reason(issue, says):
    with pytest.raises(ValidationError, match=says):
        NumericIssue(name="price", **issue)


def _huge_listing(low=1e300, high=1.7e308) -> dict:
    listing = _listing_json()
    price = listing["issues"][0]
    assert price["name"] == "price"
    price.update(low=low, high=high)
    listing["seller"]["values"]["price"].update(worst=low, best=high)
    listing["seller_limits"] = {}
    listing["product"]["list_price"] = high
    return listing


def test_a_listing_the_domain_cannot_compute_with_is_refused_at_creation_not_at_the_first_move(client, tmp_path):
    r = client.post("/v1/negotiations", json={"listing": _huge_listing()}, headers=AUTH)
    assert r.status_code == 422 and "must lie within ±1e+15" in r.json()["message"], r.text
    # The same range one unit up (millions) is played: the bound leaves real prices alone.
    fine = client.post("/v1/negotiations", json={"listing": _huge_listing(100, 1_700_000)}, headers=AUTH)
    assert fine.status_code == 201, fine.text
    moved = client.post(
        f"/v1/negotiations/{fine.json()['id']}/moves",
        json={"action": "offer", "terms": {**_buyer_terms(150), "price": 150}},
        headers=AUTH,
    )
    assert moved.status_code == 200, moved.text
    # A catalogue file is read at start-up with the same check: one line, no server.
    from negotiator.service.catalogue import Catalogue

    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps([{"listing": _huge_listing()}]))
    with pytest.raises(UsageError, match=r"the catalogue .*: entry 0\.listing\.issues\.0\.numeric: .*must lie within"):
        Catalogue.load(path)


async def test_sessions_refuse_non_finite_limits_and_listings_with_a_usage_error_naming_the_field(scenario):
    sessions = Sessions("scripted/hostile", InMemorySaver())
    with pytest.raises(UsageError, match=r"^invalid limits: minimum\.price: Input should be a finite number$"):
        await sessions.open(scenario, limits={"minimum": {"price": math.nan}})
    with pytest.raises(UsageError, match=r"^invalid limits: min_utility: Input should be a finite number$"):
        await sessions.open(scenario, limits={"min_utility": math.nan})
    for path, value, where in LISTING_POISONS:
        with pytest.raises(UsageError, match=rf"^invalid listing: {where.replace('.', '[.]')}: "):
            await sessions.open(_poison(_listing_json(), path, value))
    st_ = await sessions.open(scenario)
    with pytest.raises(UsageError, match=r"invalid buyer move: terms\.price: must be a finite number, got nan"):
        await sessions.move(st_.id, {"action": "offer", "terms": _buyer_terms(math.nan)})
    assert (await sessions.get(st_.id)).turn == 0


def test_the_sdk_models_refuse_non_finite_numbers_and_name_the_field():
    with pytest.raises(UsageError, match=r"invalid limits: minimum\.price: Input should be a finite number"):
        SellerAgent("scripted/hostile", mode="json", limits={"minimum": {"price": math.nan}})
    with pytest.raises(ValidationError, match=r"maximum\.quantity\n  Input should be a finite number"):
        HardLimits(maximum={"quantity": math.inf})
    with pytest.raises(ValidationError, match=r"terms\.price\n  Value error, must be a finite number, got nan"):
        MakeOffer(terms={"price": math.nan})
    with pytest.raises(UsageError, match=r"invalid buyer move: terms\.price: must be a finite number, got inf"):
        BuyerMove.offer({"price": math.inf})  # a shopper's input: the UsageError an app shows them
    with pytest.raises(ValidationError, match=r"forbidden\.payment_terms\.0\n  Value error, must be a finite number"):
        HardLimits(forbidden={"payment_terms": (math.nan,)})
    with pytest.raises(ValidationError, match=r"best\n  Input should be a finite number"):
        LinearValue(worst=0, best=math.inf)
    with pytest.raises(ValidationError, match=r"weights\.a\n  Input should be a finite number"):
        Preferences(weights={"a": math.nan}, values={"a": {"kind": "linear", "worst": 0, "best": 1}}, reservation=0.1)


def test_an_integer_too_large_for_a_float_is_an_invalid_offer_not_an_overflow(scenario):
    terms = _buyer_terms(10**400)
    with pytest.raises(InvalidOffer, match="price: must be a finite number, got an integer beyond the range of floats"):
        scenario.space.validate_offer(terms)
    # The same number written by a model is feedback for the model, not a crash.
    with pytest.raises(Exception, match="must be a finite number") as e:
        parse_text_action(json.dumps({"action": "make_offer", "terms": terms}), scenario.space)
    assert type(e.value).__name__ == "ActionParseError"


# --- properties ------------------------------------------------------------------------


def _numeric_paths(node, prefix=()):
    """Every numeric leaf of a listing's JSON (limits, issue bounds, weights, values ...)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numeric_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numeric_paths(v, (*prefix, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool) and prefix[-1] not in ("seed", "max_rounds"):
        yield prefix


LISTING_PATHS = list(_numeric_paths(_listing_json()))
# Mostly plausible values, so that most cases get past the door and reach the guard; the rest
# are the non-finite and extreme numbers above.
plausible = st.one_of(st.integers(450, 1050), st.floats(507, 1014))
prices = st.one_of(plausible, plausible, numbers)
limit_dicts = st.fixed_dictionaries(
    {},
    optional={
        "minimum": st.fixed_dictionaries({"price": prices}),
        "maximum": st.fixed_dictionaries({"price": prices}),
        "min_utility": st.one_of(st.floats(0, 0.9), st.floats(0, 0.9), numbers),
    },
)
listings = st.one_of(st.just([]), st.lists(st.tuples(st.sampled_from(LISTING_PATHS), numbers), max_size=2))
# Buyer moves: offers at any number (mostly in range), accepting the seller's offer.
buyer_moves = st.lists(
    st.one_of(
        st.integers(507, 1014).map(lambda p: ("offer", p)),
        prices.map(lambda p: ("offer", p)),
        st.just(("accept", None)),
    ),
    min_size=1,
    max_size=5,
)


def _limits_of(listing_json: dict, limits: dict | None) -> tuple[Listing, HardLimits]:
    listing = Listing.model_validate(listing_json)
    return listing, listing.seller_limits.merged(HardLimits.model_validate(limits) if limits else None)


def _assert_within(listing: Listing, limits: HardLimits, transcript: list[dict], agreement: dict | None) -> None:
    # The listing's own limits too: a NaN merged into them must not have weakened them.
    offered = [
        m["action"]["terms"] for m in transcript if m["party"] == "seller" and m["action"]["action"] == "make_offer"
    ]
    for terms in offered + ([agreement] if agreement is not None else []):
        assert limits.allows(terms, listing.seller) and listing.seller_limits.allows(terms, listing.seller), (
            terms,
            limits,
        )


@given(
    edits=listings,
    limits=limit_dicts,
    moves=buyer_moves,
    seller=st.sampled_from(["scripted/hostile", "scripted/boulware"]),
)
@PROPERTY
async def test_property_sessions_never_crash_and_never_deal_below_the_limits(edits, limits, moves, seller):
    listing_json = _listing_json()
    for path, value in edits:
        _poison(listing_json, path, value)
    sessions = Sessions(SellerAgent(seller, mode="json"), InMemorySaver())
    try:
        state = await sessions.open(listing_json, limits or None)
    except UsageError:
        event("refused at open")
        return  # refused with a message: fine
    listing, effective = _limits_of(listing_json, limits or None)
    for kind, price in moves:
        if state.status != "open":
            break
        move = (
            {"action": "offer", "terms": {"price": price}}
            if kind == "offer" and state.buyer_offer
            else ({"action": "offer", "terms": _buyer_terms(price)} if kind == "offer" else {"action": "accept"})
        )
        try:
            state = await sessions.move(state.id, move)
        except UsageError:
            continue  # refused, nothing applied
    dumped = state.model_dump(mode="json")
    event(f"status {dumped['status']}, {dumped['turn']} moves")
    _assert_within(listing, effective, dumped["transcript"], dumped["agreement"])


@given(limits=limit_dicts, price=st.one_of(st.integers(507, 1014), prices), later=st.booleans())
@settings(PROPERTY, max_examples=300)
def test_property_seller_agent_with_any_limits_stays_within_them(limits, price, later):
    try:
        agent = SellerAgent("scripted/hostile", mode="json", limits=limits or None)
    except ValueError:
        event("limits refused")
        return  # a pydantic ValidationError naming the field
    listing = generate(0).listing()
    try:
        terms = listing.space.validate_offer(_buyer_terms(price))
    except InvalidOffer:
        return  # the transcript boundary is not this test's subject: only valid offers reach respond()
    try:
        effective = listing.check_limits(agent.limits)
    except ValueError:
        event("limits infeasible for the listing")
        return  # a floor above the price range and the like: Sessions refuse these at open
    transcript = [PublicMove(party="buyer", action=MakeOffer(terms=terms))]
    if later:  # the seller answered with its ideal terms, the buyer came back with the same offer
        ideal = MakeOffer(terms=listing.seller.ideal(listing.space))
        transcript += [PublicMove(party="seller", action=ideal), transcript[0]]
    turn = agent.respond_sync(listing, transcript)
    event(turn.action.action)
    if isinstance(turn.action, (Accept, MakeOffer)):
        deal_or_offer = terms if isinstance(turn.action, Accept) else turn.action.terms
        assert effective.allows(deal_or_offer, listing.seller), (deal_or_offer, effective)
        assert listing.seller_limits.allows(deal_or_offer, listing.seller), (deal_or_offer, effective)


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory):
    app = create_app(
        ServiceSettings(seller="scripted/hostile", store=str(tmp_path_factory.mktemp("svc") / "n.sqlite"), api_key=KEY)
    )
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@given(edits=listings, limits=limit_dicts, moves=buyer_moves, generated=st.booleans())
@settings(PROPERTY, max_examples=80)
def test_property_the_http_service_answers_4xx_never_5xx_and_holds_the_limits(
    shared_client, edits, limits, moves, generated
):
    c = shared_client
    listing_json = _listing_json()
    for path, value in edits:
        _poison(listing_json, path, value)
    body = {"seed": 0, "limits": limits} if generated else {"listing": listing_json, "limits": limits}
    r = c.post("/v1/negotiations", content=_body(body), headers=AUTH)
    assert r.status_code in (201, 422), r.text
    event(f"open: {r.status_code}")
    if r.status_code == 422:
        return
    listing, effective = _limits_of(_listing_json() if generated else listing_json, limits or None)
    state = r.json()
    for kind, price in moves:
        if state["status"] != "open":
            break
        move = {"action": "offer", "terms": _buyer_terms(price)} if kind == "offer" else {"action": "accept"}
        r = c.post(f"/v1/negotiations/{state['id']}/moves", content=_body(move), headers=AUTH)
        assert r.status_code in (200, 409, 422), r.text
        event(f"move: {r.status_code}")
        if r.status_code == 200:
            state = r.json()
    event(f"status {state['status']}")
    _assert_within(listing, effective, state["transcript"], state["agreement"])


def test_a_price_map_s_non_finite_cost_is_no_cost_not_a_lost_episode(monkeypatch):
    """Episode metrics take finite numbers only, so a nan or inf from LiteLLM's price map must not reach
    them (the episode could not be built); it reads as an unknown price, as an exception there does."""
    from types import SimpleNamespace

    from negotiator.models import litellm_model

    message = SimpleNamespace(content='{"action": "accept"}', tool_calls=None)
    resp = SimpleNamespace(
        choices=[SimpleNamespace(message=message)], usage=SimpleNamespace(prompt_tokens=3, completion_tokens=2)
    )
    for cost in (math.nan, math.inf, 0.25):
        fake = SimpleNamespace(completion_cost=lambda completion_response, c=cost: c)
        monkeypatch.setattr(litellm_model, "litellm_module", lambda fake=fake: fake)
        got = litellm_model._to_response(resp).cost_usd
        assert got == (0.25 if cost == 0.25 else 0.0)
