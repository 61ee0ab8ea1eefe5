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
    ],
)
def test_a_spec_with_an_unusable_sampling_setting_is_refused_with_the_range(spec):
    key = spec.split("?")[1].split("=")[0]
    with pytest.raises(UsageError, match=f"{key}=.* is not usable; give a"):
        resolve_model(spec)


def test_usable_settings_pass_the_check():
    model = resolve_model("openai/gpt-4o-mini?temperature=0&top_p=0.9&max_tokens=64&top_k=0")
    assert model is not None
