"""Shared fixtures. Every test runs offline: a real provider request fails loudly."""

from __future__ import annotations

import os

os.environ["NEGOTIATOR_BLOCK_REMOTE"] = "1"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402

from negotiator.agent.graph import RetryPolicy  # noqa: E402
from negotiator.domain import generate  # noqa: E402
from negotiator.models import block_remote_requests  # noqa: E402

block_remote_requests(True)


@pytest.fixture
def scenario():
    """A furniture scenario where the buyer opens (seed 0)."""
    return generate(0)


@pytest.fixture
def seller_first():
    """A scenario where the seller opens (seed 1, b2b supplies)."""
    s = generate(1)
    assert s.opener == "seller"
    return s


@pytest.fixture
def fast_retry():
    return RetryPolicy(max_retries=3, initial_delay=0.001, max_delay=0.002, timeout=5.0)
