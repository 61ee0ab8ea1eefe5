"""A forbidden option holds however the business wrote it, and one that names no option is refused.

``limits.forbidden`` of ``{"assembly": ["NONE"]}`` used to be accepted and then never match
the option ``none``: the seller offered it and accepted it. Limits are now put on the
issue's own options when they are given (the SDK's Sessions and SellerAgent, the HTTP API
and so MCP and A2A, catalogue files), by the matching a buyer's words get (case, spacing,
Unicode compatibility forms, numbers as text), and a limit that names no option is refused
saying which.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from negotiator.agent.seller import SellerAgent
from negotiator.domain.scenario import HardLimits
from negotiator.errors import UsageError
from negotiator.service import ServiceSettings, create_app
from negotiator.service.catalogue import Catalogue, CatalogueEntry
from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate

KEY = "limits-test-key-0123456789"
SPELLINGS = [
    ("assembly", "NONE", "none"),
    ("assembly", "None", "none"),
    ("assembly", "none ", "none"),
    ("assembly", "\uff4e\uff4f\uff4e\uff45", "none"),  # fullwidth
    ("delivery_days", "14", 14),
    ("delivery_days", "14.0", 14),
    ("delivery_days", " 14", 14),
    ("delivery_days", "\uff11\uff14", 14),  # fullwidth 14
    ("delivery_days", 14.0, 14),
]
NAMES_NO_OPTION = [
    ("assembly", "n\u043ene", "'n\u043ene' is not one of the options 'none', 'included'"),  # Cyrillic o
    ("assembly", "nothing", "'nothing' is not one of the options 'none', 'included'"),
    ("delivery_days", "14.4", "'14.4' is not one of the options 3, 7, 14, 28"),  # not the nearest option
    ("delivery_days", 5, "5 is not one of the options 3, 7, 14, 28"),
]


@pytest.mark.parametrize(("issue", "spelling", "option"), SPELLINGS)
def test_a_forbidden_option_is_put_on_the_issues_own_option(issue, spelling, option):
    sc = generate(0)
    named = HardLimits(forbidden={issue: (spelling,)}).on(sc.space)
    assert named.forbidden == {issue: (option,)} and type(named.forbidden[issue][0]) is type(option)
    assert sc.check_limits(HardLimits(forbidden={issue: (spelling,)})).forbidden[issue] == (option,)


async def _play(path, issue: str, option, limits: dict | None):
    """A buyer who asks for ``option`` at the best price all along, and accepts the last offer."""
    sc = generate(0)
    want = {**sc.buyer.ideal(sc.space), issue: option, "price": sc.space.issue("price").high}
    async with Sessions.connect("scripted/boulware", path) as sessions:
        st = await sessions.open(sc, limits=limits)
        while st.status == "open":
            st = await sessions.move(st.id, BuyerMove.offer(want, expected_turn=st.turn))
            if st.status == "open" and st.seller_offer is not None and st.turn >= sc.max_turns - 2:
                st = await sessions.move(st.id, BuyerMove.accept(expected_turn=st.turn))
    offered = [m.action.terms[issue] for m in st.transcript if m.party == "seller" and m.action.terms]
    return st, offered


@pytest.mark.parametrize(("issue", "spelling", "option"), SPELLINGS)
async def test_the_seller_never_offers_or_accepts_a_forbidden_option_however_it_is_written(
    tmp_path, issue, spelling, option
):
    st, offered = await _play(tmp_path / "s.sqlite", issue, option, {"forbidden": {issue: [spelling]}})
    assert offered and option not in offered
    assert st.agreement is None or st.agreement[issue] != option
    # The same buyer without the limit gets the option (what the limit is there to stop).
    free, offered = await _play(tmp_path / "t.sqlite", issue, option, None)
    assert option in offered or (free.agreement or {}).get(issue) == option


def test_the_seller_agent_holds_a_forbidden_option_however_it_is_written():
    sc = generate(0)
    want = {**sc.buyer.ideal(sc.space), "assembly": "none", "price": sc.space.issue("price").high}
    seller = SellerAgent("scripted/boulware", limits={"forbidden": {"assembly": ["NONE "]}})
    from negotiator.actions import MakeOffer
    from negotiator.party import PublicMove

    turn = seller.respond_sync(sc.listing(), [PublicMove(party="buyer", action=MakeOffer(terms=want))])
    assert turn.action.action == "make_offer" and turn.action.terms["assembly"] == "included"


@pytest.mark.parametrize(("issue", "spelling", "message"), NAMES_NO_OPTION)
async def test_a_forbidden_option_that_names_no_option_is_refused_saying_which(tmp_path, issue, spelling, message):
    sc = generate(0)
    async with Sessions.connect("scripted/boulware", tmp_path / "s.sqlite") as sessions:
        with pytest.raises(UsageError) as e:
            await sessions.open(sc, limits={"forbidden": {issue: [spelling]}})
    assert f"forbidden option for {issue!r}: {message}" in str(e.value)
    with pytest.raises(UsageError, match="is not one of the options"):
        Catalogue([CatalogueEntry(listing=sc.listing(), limits=HardLimits(forbidden={issue: (spelling,)}))])


def test_http_refuses_a_forbidden_option_that_names_no_option_and_keeps_one_written_differently(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    auth = {"Authorization": f"Bearer {KEY}"}
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.post(
            "/v1/negotiations", json={"seed": 0, "limits": {"forbidden": {"assembly": ["n\u043ene"]}}}, headers=auth
        )
        assert r.status_code == 422, r.text
        assert (
            "forbidden option for 'assembly': 'n\u043ene' is not one of the options 'none', 'included'"
            in r.json()["message"]
        )
        r = c.post("/v1/negotiations", json={"seed": 0, "limits": {"forbidden": {"assembly": ["NONE"]}}}, headers=auth)
        assert r.status_code == 201, r.text
        sc = generate(0)
        want = {**sc.buyer.ideal(sc.space), "assembly": "none", "price": sc.space.issue("price").high}
        st = c.post(f"/v1/negotiations/{r.json()['id']}/moves", json={"action": "offer", "terms": want}, headers=auth)
        assert st.status_code == 200 and st.json()["status"] == "open"
        assert st.json()["seller_offer"]["assembly"] == "included"


def test_a_listings_own_forbidden_options_are_put_on_its_options():
    sc = generate(0)
    data = sc.listing().model_dump(mode="json")
    data["seller_limits"]["forbidden"] = {"assembly": ["NONE"], "delivery_days": ["\uff13"]}
    from negotiator.domain.scenario import Listing

    listing = Listing.model_validate(data)
    assert listing.seller_limits.forbidden == {"assembly": ("none",), "delivery_days": (3,)}
    data["seller_limits"]["forbidden"] = {"assembly": ["n\u043ene"]}
    with pytest.raises(ValueError, match="is not one of the options"):
        Listing.model_validate(data)
