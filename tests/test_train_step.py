"""``negotiator train`` end to end on a tiny random Gemma 3, on the CPU: one GRPO step,
its outputs, resuming after an interruption, and ``negotiator eval`` loading the result."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

from negotiator.errors import UsageError  # noqa: E402
from negotiator.runtime import read_episodes  # noqa: E402

TINY = "local/tiny-random-gemma"


@pytest.fixture(scope="module")
def home(tiny_home):
    return tiny_home


def _config(out: Path, **over):
    from train.config import resolve

    values = dict(
        out=out,
        base=TINY,
        lr=5e-3,
        steps=1,
        dtype="float32",
        scenario_seeds=[3, 4, 5],
        max_tokens=40,
        max_rounds=3,
        lora_layers=0,
        save_steps=1,
        invalid_penalty=0.1,
    )
    values.update(over)
    return resolve("cpu", **values)


@pytest.fixture(scope="module")
def one_step(home, tmp_path_factory):
    """One GRPO step on the tiny model; returns (output folder, manifest, initial LoRA weights)."""
    from train.run import train

    out = tmp_path_factory.mktemp("run") / "tiny"
    manifest = train(_config(out, report_to=["tensorboard"]), progress=False)  # the step also reports to TensorBoard
    return out, manifest


def _lora(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def test_one_grpo_step_updates_the_lora_weights(one_step):
    out, manifest = one_step
    (row,) = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert row["step"] == 1 and math.isfinite(row["loss"]) and math.isfinite(row["grad_norm"]) and row["grad_norm"] > 0
    assert row["frac_reward_zero_std"] < 1, "every group scored alike: no advantage, no update"
    weights = _lora(out / "adapter")
    b = {k: v for k, v in weights.items() if "lora_B" in k}
    assert b and all(math.isfinite(float(v.abs().max())) for v in b.values())
    # peft starts every lora_B at zero; after the step they have moved.
    assert sum(float(v.abs().sum()) for v in b.values()) > 0
    # The merged model differs from the base exactly where the adapter applies.
    from safetensors.torch import load_file

    from train.base_model import resolve_base_path

    merged = load_file(str(out / "merged" / "model.safetensors"))
    base = load_file(str(Path(resolve_base_path(TINY)) / "model.safetensors"))
    changed = [k for k in base if k in merged and not bool((base[k] == merged[k]).all())]
    assert changed and all(
        any(p in k for p in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"))
        for k in changed
    )


def test_outputs_and_manifest(one_step):
    out, manifest = one_step
    for name in (
        "adapter/adapter_config.json",
        "merged/config.json",
        "merged/model.safetensors",
        "merged/tokenizer_config.json",
        "manifest.json",
        "episodes.jsonl",
        "metrics.jsonl",
        "config.json",
    ):
        assert (out / name).is_file(), name
    assert (out / "reward_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest
    assert manifest["base_model"] == TINY and manifest["learning_rate"] == 5e-3
    assert manifest["steps"] == 1 and manifest["group_size"] == 4 and manifest["prompts_per_step"] == 2
    assert manifest["buyer_pool"] and manifest["buyer_pool_families"] == ["rule"]
    assert manifest["scenario_seeds"] == [3, 4, 5]
    assert manifest["package_version"] and "git_commit" in manifest
    # what else decides the numbers: the precision (the cpu profile picks it from the CPU) and the libraries
    from importlib.metadata import version

    assert manifest["dtype"] == "float32" and manifest["micro_batch"] == 2 and manifest["generation"] == "transformers"
    for name in ("torch", "transformers", "trl", "peft", "accelerate"):
        assert manifest["libraries"][name] == version(name), name
    episodes = read_episodes(out / "episodes.jsonl")
    assert len(episodes) == 8  # 2 prompts x groups of 4
    rewards = [e.labels["reward"] for e in episodes]
    assert manifest["final_reward"] == pytest.approx(sum(rewards) / len(rewards))
    assert manifest["best_reward"] == manifest["final_reward"]
    # Each group played one task: same scenario, buyer and seed four times.
    groups = {}
    for e in episodes:
        groups.setdefault(e.labels["task"], set()).add((e.scenario.id, e.buyer.spec, e.seed))
    assert len(groups) == 2 and all(len(v) == 1 for v in groups.values())
    # The step log counts every token the optimisation reads: the first prompts (what each
    # negotiation's first seller turn read), then the environment's and the seller's tokens.
    (row,) = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    first_prompts = [next(t for t in e.turns if t.party == "seller").usage.prompt_tokens for e in episodes]
    assert row["prompt_tokens"] == sum(first_prompts) > 0
    assert row["env_tokens"] > 0 and row["seller_tokens"] > 0


def test_eval_loads_the_trained_seller(one_step, tmp_path):
    out, _ = one_step
    run = tmp_path / "eval"
    # the run folder itself, as `negotiator train --out` named it: its merged model is served, and the CLI says so
    cmd = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--seller",
        f"local/{out}",
        "--suite",
        "quick",
        "--limit",
        "2",
        "--out",
        str(run),
        "--quiet",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=os.environ.copy())
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"is a training run: serving its merged model, {out.resolve() / 'merged'}" in " ".join(proc.stdout.split())
    eps = read_episodes(run / "episodes.jsonl")
    assert len(eps) == 2 and all(e.outcome.ended_by != "error" for e in eps)
    assert all(t.usage.model_calls >= 1 for e in eps for t in e.turns if t.party == "seller")
    config = json.loads((run / "config.json").read_text())
    assert config["training"]["buyer_pool"] == json.loads((out / "manifest.json").read_text())["buyer_pool"]


def test_scoring_only_seller_tokens_leaves_the_loss_unchanged(home, tmp_path, monkeypatch):
    """make_trainer scores only env_mask-1 positions (TRL scores all of them on a CPU):
    the same step with TRL's own trainer gives the same loss and gradient norm."""
    import trl
    import trl.trainer.utils as trl_utils

    from train import grpo, run

    def step(out):
        run.train(_config(out), progress=False)
        (row,) = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
        return row

    ours = step(tmp_path / "ours")
    monkeypatch.setattr(trl_utils, "_use_triton", lambda device: False)  # TRL's CPU behaviour: score every position
    monkeypatch.setattr(grpo, "make_trainer", lambda **kw: trl.GRPOTrainer(**kw))
    theirs = step(tmp_path / "trl")
    assert ours["reward"] == theirs["reward"]  # the same rollouts
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-5, abs=1e-7)
    assert ours["grad_norm"] == pytest.approx(theirs["grad_norm"], rel=1e-4)


def test_resume_after_an_interruption(home, tmp_path, monkeypatch):
    from train import grpo
    from train.run import train

    out = tmp_path / "resume"
    real = grpo.NegotiationRollouts.__call__

    def stop_at_step_two(self, prompts, trainer):
        if trainer.state.global_step >= 1:
            raise KeyboardInterrupt
        return real(self, prompts, trainer)

    monkeypatch.setattr(grpo.NegotiationRollouts, "__call__", stop_at_step_two)
    with pytest.raises(KeyboardInterrupt):
        train(_config(out, steps=2), progress=False)
    assert (out / "checkpoints" / "checkpoint-1").is_dir() and not (out / "manifest.json").exists()
    monkeypatch.setattr(grpo.NegotiationRollouts, "__call__", real)
    manifest = train(_config(out, steps=2), progress=False)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and manifest["steps"] == 2
    steps = [e.labels["train_step"] for e in read_episodes(out / "episodes.jsonl")]
    assert sorted(steps) == [1] * 8 + [2] * 8
    # A different run into the same folder is refused; the finished one is not trained again.
    with pytest.raises(UsageError, match="different training run"):
        train(_config(out, steps=2, lr=1e-4), progress=False)
    assert train(_config(out, steps=2), progress=False)["steps"] == 2


def test_rerunning_a_finished_run_says_so_and_trains_nothing(one_step):
    from train.run import train

    out, manifest = one_step
    said: list[str] = []

    class Console:
        def print(self, *args, **kwargs):
            said.append(" ".join(map(str, args)))

    assert train(_config(out, report_to=["tensorboard"]), console=Console(), progress=False) == manifest
    assert f"{out} is already trained (1 step); outputs are there." in said  # was "(1 steps)"


def test_a_run_stopped_by_its_time_budget_trains_on_when_given_more(home, tmp_path):
    """--max-minutes reached: the run saved its models and manifest but no checkpoint (every 5th step only), and a
    rerun with a larger budget said it was "already trained (1 steps)": the run could never be continued. The stop
    now saves a resume point, and a larger budget (or none) trains on to the same result as an uninterrupted run."""
    from safetensors.torch import load_file

    from train.run import train

    out = tmp_path / "budget"
    first = train(_config(out, steps=3, save_steps=5, max_minutes=1e-4), progress=False)  # stops after step 1
    assert first["steps"] == 1 and first["stopped_by_time_limit"] is True
    assert (out / "checkpoints" / "checkpoint-1" / "trainer_state.json").is_file()
    again = train(_config(out, steps=3, save_steps=5, max_minutes=1e-4), progress=False)  # the same budget: spent
    assert again == first
    done = train(_config(out, steps=3, save_steps=5), progress=False)  # no budget: trains on
    assert done["steps"] == 3 and done["stopped_by_time_limit"] is False
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert sorted(e.labels["train_step"] for e in read_episodes(out / "episodes.jsonl")) == [1] * 8 + [2] * 8 + [3] * 8
    whole = train(_config(tmp_path / "whole", steps=3, save_steps=5), progress=False)
    assert done["reward_curve"] == whole["reward_curve"]
    ours, theirs = (load_file(str(p / "adapter" / "adapter_model.safetensors")) for p in (out, tmp_path / "whole"))
    assert ours.keys() == theirs.keys() and all(bool((ours[k] == theirs[k]).all()) for k in ours)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("optimizer.pt", "File is not a zip file"),
        ("adapter_model.safetensors", "Error while deserializing header"),
        ("trainer_state.json", "Expecting"),
    ],
)
def test_a_damaged_checkpoint_is_refused_in_one_line_before_the_model_loads(one_step, tmp_path, name, says):
    """A resume point with a file cut short ended the rerun in a traceback from torch, safetensors or json,
    after the model had loaded; now one line names the checkpoint, the file and what to do."""
    import shutil

    from train.run import check_checkpoint, train

    out = tmp_path / "run"
    shutil.copytree(one_step[0], out)
    (out / "manifest.json").unlink()  # killed before the end: a rerun resumes from checkpoint-1
    ckpt = out / "checkpoints" / "checkpoint-1"
    check_checkpoint(ckpt)  # intact: resumable
    with open(ckpt / name, "r+b") as f:
        f.truncate(100)
    metrics = (out / "metrics.jsonl").read_bytes()
    with pytest.raises(UsageError) as e:
        train(_config(out, steps=2), progress=False)
    assert str(e.value).startswith(f"{ckpt} is damaged ({name}: {says}")
    assert str(e.value).endswith(
        "delete that folder to resume from the checkpoint before it (or from the start if "
        "there is none), or choose a new --out folder"
    )
    assert (out / "metrics.jsonl").read_bytes() == metrics  # nothing was rewound


def test_ctrl_c_twice_says_how_to_resume_without_a_page_of_tracebacks(home, tmp_path):
    """Ctrl-C twice left the step's negotiations unfinished, and after 'interrupted' Python's exit printed hundreds
    of lines of their tracebacks ("Exception ignored in ...", "Task was destroyed but it is pending!"). Now the two
    lines alone, exit 130."""
    import signal
    import time

    out = tmp_path / "run"
    args = ["--base", TINY, "--steps", "7", "--scenario-seeds", "3-20", "--max-rounds", "3", "--max-tokens", "40"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "train", "--out", str(out), *args, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while proc.poll() is None and not (out / "metrics.jsonl").is_file():  # step 2's rollouts are under way
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr[-3000:]
    assert stderr.strip().splitlines() == ["interrupted"], stderr[-3000:]
    assert f"rerun the same command to resume {out} from its last checkpoint" in " ".join(stdout.split())


def test_cli_rejects_bad_input(tmp_path):
    def run(*args):
        p = subprocess.run(
            [sys.executable, "-m", "negotiator", "train", "--out", str(tmp_path / "x"), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        p.stderr = " ".join(p.stderr.split())  # the console wraps long lines
        return p

    p = run("--scenario-seeds", "10100000-10100010")
    assert p.returncode == 2 and "not training seeds" in p.stderr
    p = run("--lr", "fast")
    assert p.returncode == 2 and "learning rate" in p.stderr
    p = run("--profile", "tpu")
    assert p.returncode == 2 and "cpu or gpu" in p.stderr
    p = run("--buyer", "rule/persona")
    assert p.returncode == 2 and "evaluation personas" in p.stderr
    p = run("--base", str(tmp_path))
    assert p.returncode == 2 and "not a transformers model folder" in p.stderr
    p = run("--vllm-server-url", "http://gpu-host:8001")
    assert p.returncode == 2 and "needs --generation vllm-server" in p.stderr
    assert not (tmp_path / "x" / "manifest.json").exists()


def test_gpu_profile_reaches_a_named_vllm_server():
    """The multi-GPU recipe (deployments/training) points TRL's vLLM client at its trl vllm-serve."""
    from train.config import resolve
    from train.run import grpo_args

    # float32: bf16 arguments are refused on a machine without a GPU
    cfg = resolve(
        "gpu", out=Path("x"), generation="vllm-server", vllm_server_url="http://127.0.0.1:8001", dtype="float32"
    )
    args = grpo_args(cfg)
    assert (args.use_vllm, args.vllm_mode, args.vllm_server_base_url) == (True, "server", "http://127.0.0.1:8001")
    assert args.num_generations == 8 and args.max_completion_length == 256
    cpu = grpo_args(resolve("cpu", out=Path("x")))
    assert (
        cpu.use_cpu and not cpu.bf16 and not cpu.gradient_checkpointing
    )  # recomputing costs more than storing on a CPU
    assert args.gradient_checkpointing  # on a GPU, TRL's default: activations recomputed, memory kept


def test_activation_checkpointing_is_named_as_the_installed_transformers_names_it():
    """transformers 5.2x calls it activation_checkpointing; the 5.17 of the CUDA host the GPU
    check ran on knows only gradient_checkpointing, and GRPOConfig refused the new name there."""
    from dataclasses import dataclass

    from trl import GRPOConfig

    from train.run import checkpointing_arg

    @dataclass
    class Older:
        gradient_checkpointing: bool = False

    assert checkpointing_arg(Older) == "gradient_checkpointing"
    name = checkpointing_arg(GRPOConfig)
    assert name in GRPOConfig.__dataclass_fields__


def test_time_budget_stops_before_a_step_that_would_overrun_it():
    """`--max-minutes` is a budget the run stays inside: a step starts only while the time
    spent plus a typical (median) step fits; a slow first step does not end a run early."""
    from train.run import out_of_time

    assert not out_of_time([], 60)
    assert not out_of_time([10, 10, 10], 45)  # 30 spent + 10 fits in 45
    assert out_of_time([10, 10, 10, 10], 45)  # 40 spent + 10 would reach 50
    assert not out_of_time([300, 100, 100], 600)  # median 100, not the warm-up's 300: 500 + 100 fits
    assert out_of_time([300, 100, 100, 100], 600)


def test_advantages_are_scaled_by_the_step_and_older_run_folders_still_resume(tmp_path):
    """`--scale-rewards batch` is the default GRPOConfig; a folder written before the option
    existed (no key in its config.json) ran with TRL's per-group scaling and resumes as such."""
    from train.config import resolve
    from train.run import grpo_args, prepare_out

    assert grpo_args(resolve("cpu", out=tmp_path / "a")).scale_rewards == "batch"
    old = resolve("cpu", out=tmp_path / "old", scale_rewards="group")
    prepare_out(old)
    path = tmp_path / "old" / "config.json"
    data = json.loads(path.read_text())
    del data["scale_rewards"]
    path.write_text(json.dumps(data))
    assert prepare_out(old) is None  # resumed, not refused
    with pytest.raises(UsageError, match="different training run"):
        prepare_out(resolve("cpu", out=tmp_path / "old"))  # now batch: a different run


def test_the_step_metrics_reach_tensorboard_with_the_negotiations_own(one_step):
    """--report-to tensorboard: TRL's metrics and the negotiation measures of OUT/metrics.jsonl, per step."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, manifest = one_step
    (events,) = {p.parent for p in out.rglob("events.out.tfevents.*")}  # `tensorboard --logdir OUT` finds it
    board = EventAccumulator(str(events))
    board.Reload()
    scalars = {tag: board.Scalars(tag) for tag in board.Tags()["scalars"]}
    (row,) = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    for key in ("score", "deal_rate", "invalid_rate", "first_offer_utility"):
        (point,) = scalars[f"train/negotiation/{key}"]
        assert point.step == 1 and point.value == pytest.approx(row[key], abs=1e-6), key
    (loss,) = scalars["train/loss"]
    assert loss.value == pytest.approx(row["loss"], rel=1e-5, abs=1e-7)
    assert "train/reward" in scalars and manifest["report_to"] == ["tensorboard"]


def _copy_run(out: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(out, dest, ignore=shutil.ignore_patterns("checkpoints"))
    return dest


def test_a_finished_run_is_pushed_to_the_hub_without_training_again(one_step, tmp_path, monkeypatch):
    """--push-to-hub on a finished run's command: the adapter, its records and a model card go to the hub
    named by HF_ENDPOINT (here a fake one on loopback: no request leaves the machine), nothing is retrained."""
    from hub_fake import FakeHub

    from train.run import train

    out = _copy_run(one_step[0], tmp_path / "tiny-seller")
    metrics = (out / "metrics.jsonl").read_bytes()
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        manifest = train(_config(out, push_to_hub=True, hub_private_repo=True), progress=False)
    assert (out / "metrics.jsonl").read_bytes() == metrics and manifest["steps"] == 1  # not trained again
    repo = hub.repos["tester/tiny-seller"]  # default repo name: the output folder's, under the token's account
    assert repo["private"] is True and len(repo["commits"]) == 1
    files = repo["files"]
    for name in ("adapter_model.safetensors", "adapter_config.json", "tokenizer_config.json"):
        assert files[name] == (out / "adapter" / name).read_bytes(), name
    for name in ("config.json", "metrics.jsonl", "reward_curve.png"):
        assert files[name] == (out / name).read_bytes(), name
    card = files["README.md"].decode()
    assert card.startswith("---\nlibrary_name: peft\n") and TINY in card and "| learning rate | 0.005 |" in card
    assert json.loads(files["manifest.json"])["steps"] == 1
    hub_record = json.loads((out / "manifest.json").read_text())["hub"]
    assert (
        hub_record
        == manifest["hub"]
        == {
            "repo_id": "tester/tiny-seller",
            "url": f"{hub.url}/tester/tiny-seller",
            "commit": repo["commits"][0]["oid"],
            "private": True,
        }
    )
    # The pushed folder is a kept run: the seller it serves plays the strategy it trained with.
    down = tmp_path / "downloaded"
    down.mkdir()
    for name, data in files.items():
        (down / name).write_bytes(data)
    from negotiator.models.local.servers import trained_strategy

    assert trained_strategy(str(down)) == json.loads((out / "config.json").read_text())["strategy"]


def test_a_refused_push_keeps_the_run_and_says_how_to_push_again(one_step, tmp_path, monkeypatch):
    from hub_fake import FakeHub

    from negotiator.errors import PushFailed
    from train.run import train

    out = _copy_run(one_step[0], tmp_path / "tiny")
    before = (out / "manifest.json").read_text()
    with FakeHub(refuse=403) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        with pytest.raises(PushFailed, match=r"the hub refused the push to me/tiny \(HTTP 403\): log in with"):
            train(_config(out, push_to_hub=True, hub_model_id="me/tiny"), progress=False)
    assert (out / "manifest.json").read_text() == before and (out / "adapter" / "adapter_config.json").is_file()
    with FakeHub() as hub:  # nothing listens where the hub was: the push cannot reach it
        dead = hub.url
    monkeypatch.setenv("HF_ENDPOINT", dead)
    with pytest.raises(PushFailed, match="could not reach the hub"):
        train(_config(out, push_to_hub=True, hub_model_id="me/tiny"), progress=False)


def test_the_imitation_warm_start_teaches_the_strategys_moves_before_grpo(home, tmp_path):
    """``--imitate N``: N negotiations played by the strategy's own moves, recorded as the
    rollouts record the policy (the seller agent's prompt, the decision answers in the loss),
    fitted before the GRPO step; the record says the answers became likelier."""
    from train.run import train

    out = tmp_path / "warm"
    manifest = train(
        _config(out, strategy="responsive?menu=moves&words=strategy", imitate=3, max_tokens=24), progress=False
    )
    record = json.loads((out / "imitation.json").read_text())
    assert manifest["imitation"] == record
    assert record["negotiations"] == record["traces"] == 3 and record["answer_tokens"] > 3 * 8
    assert record["loss_after"] < record["loss_before"] - 0.1
    assert record["token_accuracy_after"] > record["token_accuracy_before"]
    with pytest.raises(UsageError, match="--imitate .* no strategy"):
        train(_config(tmp_path / "pure", strategy="none", imitate=2), progress=False)


def test_the_lookahead_warm_start_alone_saves_a_seller_that_learned_the_teachers_moves(home, tmp_path):
    """``--imitate N --teacher lookahead --steps 0``: the demonstrations are played by the
    lookahead teacher (train.lookahead), the adapter learns its answers, no GRPO step runs,
    and the run is saved like any other; the record says what the teacher did."""
    from train.run import train

    out = tmp_path / "look"
    decide = "responsive?menu=moves&words=strategy"
    buyers = ["rule/hurry", "rule/threat", "rule/conceder?e=3"]
    manifest = train(
        _config(
            out,
            strategy=decide,
            imitate=4,
            teacher="lookahead",
            teacher_margin=0.05,
            steps=0,
            max_tokens=24,
            buyers=buyers,
        ),
        progress=False,
    )
    record = json.loads((out / "imitation.json").read_text())
    assert manifest["steps"] == 0 and manifest["imitation"] == record
    assert record["teacher"] == "lookahead" and record["teacher_margin"] == 0.05 and record["negotiations"] == 4
    assert record["teacher_moves"] > 4 and 0 < record["teacher_own_moves"] < 1
    assert record["loss_after"] < record["loss_before"] - 0.1
    assert (out / "adapter" / "adapter_config.json").is_file() and not (out / "metrics.jsonl").exists()
    for over, says in [
        (dict(strategy="boulware?candidates=3", imitate=2, teacher="lookahead"), "priced moves"),
        (dict(strategy=decide, teacher="lookahead"), "add --imitate N"),
        (dict(strategy=decide, steps=0), "--steps 0 trains nothing"),
    ]:
        with pytest.raises(UsageError, match=says):
            train(_config(tmp_path / "bad", **over), progress=False)


def test_the_reading_warm_start_learns_one_demonstration_per_seller_turn(home, tmp_path):
    """``--strategy 'responsive?menu=readings' --teacher reader --imitate N --steps 0``: each seller
    turn of the N negotiations is a trace of its own (the view is asked afresh), and the saved
    seller reads with the menu it was trained on."""
    from train.run import train

    out = tmp_path / "read"
    manifest = train(
        _config(
            out,
            strategy="responsive?menu=readings",
            imitate=3,
            teacher="reader",
            steps=0,
            max_tokens=24,
            buyers=["rule/hurry", "rule/quote", "rule/conceder?e=3"],
        ),
        progress=False,
    )
    record = json.loads((out / "imitation.json").read_text())
    assert manifest["imitation"] == record and record["negotiations"] == 3
    assert record["traces"] == record["teacher_moves"] > 3  # a trace per seller turn
    assert 0 < record["teacher_own_moves"] < 1  # some turns read a hurry or a quote, the opening reads nothing
    assert record["loss_after"] < record["loss_before"]


def test_the_warm_starts_loss_scores_only_the_answer_positions_and_equals_the_full_loss(home):
    """``train.imitate.answer_loss`` runs the LM head only where an answer token is predicted:
    the same cross-entropy, argmax hits and count as scoring every position of the sequence."""
    import torch

    from train.base_model import load_base
    from train.imitate import answer_loss
    from train.policy import TokenTrace

    model = load_base(TINY, dtype="float32").model
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (40,), generator=gen).tolist()
    mask = [0] * 5 + [1] * 6 + [0] * 10 + [1] * 4
    trace = TokenTrace(prompt_ids=ids[:15], completion_ids=ids[15:], loss_mask=mask)
    loss, right, n = answer_loss(model, trace)

    seq = torch.tensor([ids])
    logits = model(input_ids=seq).logits[0, :-1].float()
    read = torch.tensor([False] * 15 + [bool(m) for m in mask])[1:]
    full = torch.nn.functional.cross_entropy(logits[read], seq[0, 1:][read], reduction="sum")
    assert n == 10 == int(read.sum())
    assert loss.item() == pytest.approx(full.item(), rel=1e-5)
    assert right == int((logits[read].argmax(-1) == seq[0, 1:][read]).sum())


def test_the_imitation_pass_benchmark_compares_two_ways_that_give_one_loss(home, monkeypatch, capsys):
    """benchmarks/imitation_pass.py times the warm start's pass both ways on one sequence and
    checks that the loss is the same (the tiny model here: the 270M's figures are in docs/)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "imitation_pass.py"
    spec = importlib.util.spec_from_file_location("imitation_pass", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr(
        sys, "argv", ["imitation_pass", "--base", TINY, "--dtype", "float32", "--tokens", "200", "--reps", "1"]
    )
    bench.main()
    out = capsys.readouterr().out
    assert "200 tokens (30 answer tokens)" in out and "losses agree: True" in out
    assert "full / answers: " in out
