"""A spec's sampling settings are checked before any model starts: nan, inf or out of range is bad input."""

import pytest

from negotiator.errors import UsageError
from negotiator.models.resolve import resolve_model


@pytest.mark.parametrize(
    "spec",
    [
        "local/gemma-3-270m-reader?temperature=nan",
        "local/gemma-3-270m-reader?temperature=inf",
        "local/gemma-3-270m-reader?temperature=-1",
        "local/gemma-3-270m-reader?max_tokens=0",
        "local/gemma-3-270m?max_tokens=2.5",
        "openai/gpt-4o-mini?top_p=2",
        "openai/gpt-4o-mini?top_k=-3",
        "openai/gpt-4o-mini?temperature=warm",
        "openai/gpt-4o-mini?seed=1.5",
    ],
)
def test_a_spec_with_an_unusable_sampling_setting_is_refused_with_the_range(spec):
    key = spec.split("?")[1].split("=")[0]
    with pytest.raises(UsageError, match=f"{key}=.* is not usable; give a"):
        resolve_model(spec)


def test_usable_settings_pass_the_check():
    model = resolve_model("openai/gpt-4o-mini?temperature=0&top_p=0.9&max_tokens=64&top_k=0")
    assert model is not None


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("local/gemma-3-270m-reader?temprature=0", "unknown setting 'temprature' (did you mean temperature?)"),
        ("local/gemma-3-270m?top-p=0.9", "unknown setting 'top-p' (did you mean top_p?)"),
        ("local/gemma-3-270m-reader?temperature=0&temperature=1", "gives temperature more than once"),
        ("rule/boulware?e=0.2&e=0.3", "gives e more than once"),
        ("scripted/boulware?latncy=0.1", "unknown parameters for scripted/boulware: latncy; known: latency"),
        ("scripted/boulware?temperature=nan", "temperature=nan is not usable; give a number 0 or above"),
        ("local/gemma-3-270m?seed=7", "each turn is seeded from the run's --seed or SellerAgent(seed=...)"),
        ("local/gemma-3-270m-raeder", "no such prepared model or folder (did you mean local/gemma-3-270m-reader?)"),
    ],
)
def test_a_typo_or_a_repeated_setting_is_refused_not_ignored(spec, says):
    """Before, ?temprature=0 on the default sampled at the folder's temperature 1 without a word, and a
    repeated key silently took its last value."""
    from negotiator.agent.seller import SellerAgent
    from negotiator.runtime.parties import make_party

    with pytest.raises(UsageError) as e:
        SellerAgent(spec) if spec.startswith("local/") else make_party(spec, "seller")
    assert says in str(e.value)


def test_a_buyer_s_local_model_takes_no_strategy_setting():
    from negotiator.buyers.llm import LLMBuyer

    with pytest.raises(UsageError, match="menu is a seller's strategy setting; a buyer's model takes none"):
        LLMBuyer("local/gemma-3-270m?menu=readings")


def test_the_spec_s_token_limit_is_the_turn_s_and_a_second_one_is_refused():
    from negotiator.agent.seller import SellerAgent

    assert SellerAgent("local/gemma-3-270m-reader?max_tokens=48").config.max_tokens == 48
    assert SellerAgent("local/gemma-3-270m-reader").config.max_tokens == 256  # the default
    assert SellerAgent("local/gemma-3-270m-reader", max_tokens=64).config.max_tokens == 64
    assert SellerAgent("local/gemma-3-270m-reader?temperature=0").config.temperature == 0
    with pytest.raises(UsageError, match="sets max_tokens=48 and the argument max_tokens=64: give it once"):
        SellerAgent("local/gemma-3-270m-reader?max_tokens=48", max_tokens=64)
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(UsageError, match="temperature=.*give a number 0 or above"):
            SellerAgent("local/gemma-3-270m-reader", temperature=bad)


def test_eval_refuses_a_bad_seller_setting_before_any_model_starts(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "400"}  # one line per error, as a reader of the test expects
    for spec, says in (
        ("local/gemma-3-270m-reader?menu=bogus", "unknown menu 'bogus'"),
        ("local/gemma-3-270m-reader?temprature=0", "did you mean temperature?"),
    ):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "negotiator",
                "eval",
                "--seller",
                spec,
                "--limit",
                "1",
                "--out",
                str(tmp_path / "r"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert "starting the local model" not in r.stdout + r.stderr
        assert "strategies:" not in r.stderr  # the strategy's name was right: no list of strategies


@pytest.mark.parametrize(
    ("strategy", "says"),
    [
        ("boulware?leeway=abc", "strategy boulware: leeway='abc' is not a number"),
        ("responsive?lead=nan", "strategy responsive: lead='nan' is not a finite number"),
        ("boulware?candidates=2.5", "strategy boulware: candidates='2.5' is not a whole number"),
        ("boulware?aspiration=x", "strategy boulware: aspiration='x' is not a number"),
    ],
)
def test_a_strategy_setting_that_is_not_a_number_is_named(strategy, says):
    """Before: "could not convert string to float: 'abc'", without the setting's name."""
    from negotiator.agent.seller import SellerAgent

    with pytest.raises(UsageError) as e:
        SellerAgent("scripted/boulware", strategy=strategy)
    assert str(e.value) == says
