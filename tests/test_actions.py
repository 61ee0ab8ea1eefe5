"""Action schemas: tool definitions, JSON-text and tool-call parsing agree, terms are strict."""

from __future__ import annotations

import json

import pytest

from negotiator.actions import (
    Accept,
    ActionParseError,
    MakeOffer,
    WalkAway,
    action_json_schema,
    action_to_json,
    parse_text_action,
    parse_tool_call,
    tool_definitions,
)
from negotiator.domain import generate

S = generate(0)
TERMS = S.seller.ideal(S.space)


def test_tool_definitions_are_openai_format_with_exact_terms():
    tools = tool_definitions(S.space)
    names = [t["function"]["name"] for t in tools]
    assert names == ["make_offer", "accept", "walk_away"]
    offer = tools[0]["function"]["parameters"]
    terms = offer["properties"]["terms"]
    assert terms["required"] == S.space.names and terms["additionalProperties"] is False
    delivery = terms["properties"]["delivery_days"]
    assert delivery == {"enum": [3, 7, 14, 28]}
    price = terms["properties"]["price"]
    assert price["minimum"] == S.issues[0].low and price["maximum"] == S.issues[0].high


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"action": "make_offer", "terms": TERMS, "message": "hi"}),
        "Sure! Here you go:\n```json\n"
        + json.dumps({"action": "make_offer", "terms": TERMS, "message": "hi"})
        + "\n```\nThanks.",
        "My answer: " + json.dumps({"action": "make_offer", "message": "hi", "terms": TERMS}) + " -- hope that works",
        json.dumps({"name": "make_offer", "arguments": {"terms": TERMS, "message": "hi"}}),
        json.dumps({"make_offer": {"terms": TERMS, "message": "hi"}}),
    ],
)
def test_json_text_and_tool_call_parse_to_the_same_action(text):
    from_text = parse_text_action(text, S.space)
    from_tool = parse_tool_call("make_offer", json.dumps({"terms": TERMS, "message": "hi"}), S.space)
    assert from_text == from_tool == MakeOffer(terms=TERMS, message="hi")


def test_accept_and_walk_away_parse_in_both_modes():
    assert (
        parse_text_action('{"action": "accept", "message": "deal"}')
        == parse_tool_call("accept", {"message": "deal"})
        == Accept(message="deal")
    )
    assert parse_text_action('{"action": "walk_away"}') == parse_tool_call("walk_away", "{}") == WalkAway()


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "empty"),
        ("I would like 900 dollars please", "No JSON object"),
        ('{"price": 900}', 'no "action"'),
        ('{"action": "haggle"}', "Unknown action"),
        (json.dumps({"action": "make_offer", "terms": {**TERMS, "price": "900"}}), "price: must be a number"),
        (
            json.dumps({"action": "make_offer", "terms": {**TERMS, "delivery_days": 5}}),
            "delivery_days: 5 is not an allowed option",
        ),
        (
            json.dumps({"action": "make_offer", "terms": {k: v for k, v in TERMS.items() if k != "assembly"}}),
            "assembly: missing",
        ),
        (json.dumps({"action": "make_offer", "message": "x"}), "terms"),
    ],
)
def test_bad_output_gives_feedback_a_model_can_act_on(text, needle):
    with pytest.raises(ActionParseError) as e:
        parse_text_action(text, S.space)
    assert needle in e.value.feedback


def test_bad_tool_calls():
    with pytest.raises(ActionParseError, match="Unknown tool"):
        parse_tool_call("offer", "{}", S.space)
    with pytest.raises(ActionParseError, match="not valid JSON"):
        parse_tool_call("make_offer", "{terms:", S.space)


def test_the_schemas_name_a_wrong_allowed_action():
    # Before: tool_definitions(space, ("offer",)) raised KeyError: 'offer'; action_json_schema(space, ())
    # returned {"anyOf": []}, a schema no answer meets, and ("nope",) or "accept" (a string: one schema per
    # letter, {"const": "a"} ...) returned schemas for actions that do not exist.
    from negotiator.errors import UsageError

    for schema in (tool_definitions, action_json_schema):
        with pytest.raises(
            UsageError, match="'offer' is not an action; give one or more of make_offer, accept, walk_away"
        ):
            schema(S.space, ("offer",))
        with pytest.raises(UsageError, match="it names no action"):
            schema(S.space, ())
        with pytest.raises(UsageError, match="allowed must be a tuple of action names .*, not 'accept'"):
            schema(S.space, "accept")
    assert [t["function"]["name"] for t in tool_definitions(S.space, ["accept", "walk_away"])] == [
        "accept",
        "walk_away",
    ]
    assert action_json_schema(S.space, ("walk_away",))["properties"]["action"] == {"const": "walk_away"}


def test_json_schema_accepts_exactly_the_canonical_actions():
    jsonschema = pytest.importorskip("jsonschema")
    schema = action_json_schema(S.space)
    jsonschema.validate(json.loads(action_to_json(MakeOffer(terms=TERMS, message="x"))), schema)
    jsonschema.validate(json.loads(action_to_json(Accept(message="ok"))), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": "make_offer", "message": "x", "terms": {**TERMS, "delivery_days": 5}}, schema)
    only_offers = action_json_schema(S.space, ("make_offer",))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": "accept", "message": ""}, only_offers)
