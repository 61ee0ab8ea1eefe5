"""An app type-checked with ``mypy --strict`` against the package (it ships py.typed) sees every
public name typed, from where docs/api.md imports it.

The package's own modules are read but not judged here (``ignore_errors``): what is checked is what
an app's code gets, as from an installed wheel: under ``--strict`` (no implicit re-export) a name a
face module imports lazily is exported only if its literal ``__all__`` names it, and a name typed
through a lazy ``__getattr__`` would reach the app as ``Any``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import negotiator
import negotiator.agent
import negotiator.sim

ROOT = Path(__file__).resolve().parent.parent
FACES = {"negotiator": negotiator, "negotiator.sim": negotiator.sim, "negotiator.agent": negotiator.agent}


def _exports(face) -> list[str]:
    homes = getattr(face, "_EXPORTS", None) or face._HOMES
    return sorted(homes)


def test_each_face_lists_what_it_exports():
    assert negotiator.__all__ == ["__version__", *negotiator._EXPORTS]  # in the order of the table
    for face in (negotiator.sim, negotiator.agent):
        assert sorted(face.__all__) == _exports(face)


# An app written as docs/embedding.md writes it, with the annotations --strict asks of an app's own code.
APP = """
from negotiator import BuyerMove, MakeOffer, MoveConflict, SellerAgent, Sessions, SessionState, TurnRecord, example_listing


async def shop(sessions: Sessions, seller: SellerAgent) -> SessionState:
    opened = await sessions.open(example_listing(seed=0), limits={"minimum": {"price": 900}})
    token: str = opened.token
    offer = {"price": 850, "delivery_days": 7, "assembly": "none", "payment_terms": "net30"}  # dict[str, object]
    state = await sessions.move(opened.id, BuyerMove.offer(offer, "Would you take 850?", expected_turn=opened.turn))
    try:
        state = await sessions.move(state.id, "Is that your best price?")
    except MoveConflict as e:  # .state: where the negotiation stands now
        reloaded: int = e.state.turn
        state = await sessions.get(state.id)
        assert state.turn == reloaded
    assert await sessions.verify_token(state.id, token)
    turn: TurnRecord = await seller.respond(example_listing(seed=0), [{"party": "buyer", "action": {}}])
    assert isinstance(turn.action, MakeOffer) and float(turn.action.terms["price"]) >= 900
    return await sessions.get(state.id)
"""


def test_a_strict_app_sees_every_public_name_typed(tmp_path):
    app = ["from __future__ import annotations"]
    for i, (name, face) in enumerate(FACES.items()):
        names = _exports(face)
        app.append(f"from {name} import {', '.join(f'{n} as n{i}_{n}' for n in names)}")
        app += [f"reveal_type(n{i}_{n})" for n in names]
    app.append("from negotiator import __version__\nversion: str = __version__")
    app.append(APP)
    (tmp_path / "app.py").write_text("\n".join(app) + "\n")
    # docs/plugins.md's buyer, as a user copies it (its on_end(outcome) is left unannotated there).
    buyer = re.search(r"```python\n(.*?)```", (ROOT / "docs/plugins.md").read_text(), re.S).group(1)
    (tmp_path / "my_buyer.py").write_text(buyer)
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nstrict = True\nplugins = pydantic.mypy\n"
        "[mypy-my_buyer]\ndisallow_untyped_defs = False\ndisallow_incomplete_defs = False\n"
        "[mypy-negotiator.*]\nignore_errors = True\n"
        "[mypy-litellm.*,langgraph.*,opentelemetry.*]\nignore_missing_imports = True\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--cache-dir", str(tmp_path / "c")]
        + [str(tmp_path / "app.py"), str(tmp_path / "my_buyer.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = run.stdout
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert not errors, "\n".join(errors)  # before: 'Module "negotiator" does not explicitly export attribute ...'
    revealed = re.findall(r'Revealed type is "(.*)"', out)
    assert len(revealed) == sum(len(_exports(f)) for f in FACES.values()), out[-2000:]
    untyped = [line for line in out.splitlines() if line.endswith('Revealed type is "Any"')]
    assert not untyped, "\n".join(untyped)  # before: SellerAgent, Guard, LLMParty reached an app as Any
