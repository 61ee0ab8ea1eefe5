"""Every exception lives in negotiator/errors.py, in three kinds, and what an app must
catch is at the package root."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import negotiator
from negotiator import errors

ROOT = Path(__file__).resolve().parent.parent


def _exception_classes_outside_errors_py() -> list[str]:
    known = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, BaseException)}
    found = []
    for pkg in ("negotiator", "evals", "train"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path == ROOT / "negotiator" / "errors.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                    if bases & (known | {"Exception", "BaseException", "RuntimeError", "ValueError", "AssertionError"}):
                        found.append(f"{path.relative_to(ROOT)}:{node.name}")
    return found


def test_no_exception_is_defined_outside_errors_py():
    assert _exception_classes_outside_errors_py() == []


def test_the_three_kinds():
    for usage in (errors.MoveConflict, errors.UnknownSession, errors.ScriptError, errors.ScriptExhausted):
        assert issubclass(usage, errors.UsageError)
    for failed in (
        errors.ModelError,
        errors.ProviderError,
        errors.ProtocolError,
        errors.InvalidOffer,
        errors.SweepFailed,
    ):
        assert issubclass(failed, errors.NegotiatorError) and not issubclass(failed, errors.UsageError)
    # the parse-retry signal is control flow: no `except NegotiatorError` or `except ModelError` swallows it
    assert not issubclass(errors.ActionParseError, errors.NegotiatorError)
    assert errors.ActionParseError("Call one tool.").feedback == "Call one tool."


def test_what_an_app_must_catch_is_at_the_root():
    for name in ("UsageError", "MoveConflict", "UnknownSession", "ProviderError", "NegotiatorError"):
        assert getattr(negotiator, name) is getattr(errors, name)
    from negotiator.sessions import MoveConflict, UnknownSession  # the old homes still answer

    assert MoveConflict is negotiator.MoveConflict and UnknownSession is negotiator.UnknownSession


def test_a_scripted_model_with_unused_answers_says_so():
    from negotiator.models.scripted import ScriptedModel

    model = ScriptedModel(["{}"], spec="scripted/test")
    with pytest.raises(errors.ScriptError, match="1 scripted answers were never requested"):
        model.assert_consumed()
