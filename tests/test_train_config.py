"""Training defaults: the cpu profile trains as the run that beat the base here did; gpu keeps the paper's rate."""

from __future__ import annotations

import typer.main

from negotiator.cli.app import _register, app
from train.config import resolve


def _train_params(*args: str) -> dict:
    _register()
    command = typer.main.get_command(app).commands["train"]
    return command.make_context("train", ["--out", "runs/x", *args]).params


def test_the_cpu_profile_uses_the_rate_and_length_that_moved_the_270m(tmp_path):
    cfg = resolve("cpu", out=tmp_path)
    assert cfg.lr == 6e-4 and cfg.max_rounds is None  # docs/results.md, attempt 7: --lr 6e-4 --max-rounds 0
    assert resolve("cpu", out=tmp_path, max_rounds=4).max_rounds == 4  # a cap is still a choice


def test_the_gpu_profile_keeps_the_papers_rate(tmp_path):
    assert resolve("gpu", out=tmp_path).lr == 3e-6


def test_the_cli_lr_defaults_to_the_profile(tmp_path):
    assert _train_params()["lr"] is None  # None reaches resolve(), which takes the profile's rate
    assert resolve("cpu", out=tmp_path, lr=None).lr == 6e-4
    assert _train_params("--lr", "1e-3,2e-3")["lr"] == "1e-3,2e-3"


def test_training_plays_the_assisted_seller_with_choices_open_by_default(tmp_path):
    from negotiator.agent.seller import parse_strategy

    assert _train_params()["strategy"] is None  # None reaches resolve(): the config's default
    cfg = resolve("cpu", out=tmp_path)
    plan = parse_strategy(cfg.strategy)
    assert plan is not None and plan.name == "boulware" and plan.candidates == 3
    assert (
        resolve("cpu", out=tmp_path, strategy="none").strategy == "none"
    )  # the pure policy, as docs/results.md trained
    assert (
        parse_strategy(resolve("cpu", out=tmp_path, strategy="linear?candidates=2&leeway=0.02").strategy).leeway == 0.02
    )


def test_a_strategy_that_leaves_the_model_no_move_is_refused_against_rule_buyers(tmp_path):
    import pytest

    from negotiator.errors import UsageError

    with pytest.raises(UsageError, match="nothing to learn") as e:
        resolve("cpu", out=tmp_path, strategy="boulware")  # one candidate, the deployed default
    assert "candidates=3" in str(e.value) and "--strategy none" in str(e.value)
    with pytest.raises(UsageError, match="nothing to learn"):
        resolve("cpu", out=tmp_path, strategy="boulware", buyers=["rule/conceder", "rule/linear"])
    # A move the model chooses, or a buyer that reads the words, gives the reward something to see.
    assert resolve("cpu", out=tmp_path, strategy="boulware?leeway=0.05").strategy == "boulware?leeway=0.05"
    assert resolve("cpu", out=tmp_path, strategy="boulware", buyers=["scripted/boulware"]).strategy == "boulware"
    with pytest.raises(UsageError, match="unknown settings"):
        resolve("cpu", out=tmp_path, strategy="boulware?candidate=3")


def test_a_bad_option_is_named_by_its_flag_not_by_pydantic(tmp_path):
    """It said: bad training option: 1 validation error for TrainConfig steps Input should be greater than or
    equal to 0 [type=greater_than_equal, input_value=-1, input_type=int] For further information visit https://..."""
    import pytest

    from negotiator.errors import UsageError

    for given, message in [
        ({"steps": -1}, "--steps -1: should be greater than or equal to 0"),
        ({"num_generations": 1}, "--group-size 1: should be greater than or equal to 2"),
        ({"lora_r": 0, "lora_alpha": 0}, "--lora-r 0: should be greater than or equal to 1"),  # alpha is 2 x r
        ({"scale_rewards": "std"}, "--scale-rewards std: should be 'group', 'batch' or 'none'"),
        ({"max_tokens": 0, "imitate": -5}, "--max-tokens 0: should be greater than or equal to 8; --imitate -5: "),
    ]:
        with pytest.raises(UsageError) as e:
            resolve("cpu", out=tmp_path, **given)
        assert str(e.value).startswith(message) and "pydantic" not in str(e.value) and "TrainConfig" not in str(e.value)


def test_a_number_that_is_not_finite_or_a_seed_numpy_refuses_is_bad_input(tmp_path):
    """--temperature inf, --max-minutes inf and --invalid-penalty inf trained; --seed -1 ended in numpy's traceback
    (Seed must be between 0 and 2**32 - 1) after the model had loaded."""
    import pytest

    from negotiator.errors import UsageError

    for given, message in [
        ({"temperature": float("inf")}, "--temperature inf: should be a finite number"),
        ({"max_minutes": float("inf")}, "--max-minutes inf: should be a finite number"),
        ({"invalid_penalty": float("inf")}, "--invalid-penalty inf: should be a finite number"),
        ({"temperature": float("nan")}, "--temperature nan: should be a finite number"),
        ({"seed": -1}, "--seed -1: should be greater than or equal to 0"),
        ({"seed": 2**32}, "--seed 4294967296: should be less than or equal to 4294967295"),
    ]:
        with pytest.raises(UsageError) as e:
            resolve("cpu", out=tmp_path, **given)
        assert str(e.value) == message
    assert resolve("cpu", out=tmp_path, seed=2**32 - 1).seed == 2**32 - 1


def test_more_steps_or_demonstrations_than_training_scenarios_are_refused_before_any_is_built(tmp_path):
    """--steps 99999999999999 and --scenario-seeds 0-99999999999 ended in MemoryError's traceback (the seeds
    were built before any check); --steps 600000 would have failed later, on scenario seeds the user never gave."""
    import subprocess
    import sys

    import pytest

    from negotiator.errors import UsageError
    from train.pool import parse_seed_range

    with pytest.raises(UsageError, match=r"^--steps 600000: 600,000 steps of 2 prompts .* give at most 500,000 steps"):
        resolve("cpu", out=tmp_path, steps=600000)
    with pytest.raises(UsageError, match=r"^--imitate 5000000: .* give at most 1,000,000"):
        resolve("cpu", out=tmp_path, imitate=5000000, strategy="responsive?menu=moves&words=strategy")
    assert len(resolve("cpu", out=tmp_path, steps=500000).scenario_seeds) == 1_000_000  # the whole range fits
    with pytest.raises(UsageError, match=r"scenario seeds \[99999999999\] are not training seeds"):
        parse_seed_range("0-99999999999")
    p = subprocess.run(
        [sys.executable, "-m", "negotiator", "train", "--out", str(tmp_path / "x"), "--steps", "99999999999999"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "--steps 99999999999999: 99,999,999,999,999 steps of 2 prompts" in " ".join(p.stderr.split())


def test_a_training_buyer_whose_server_is_down_is_refused_before_the_model_loads(tmp_path):
    """It played the whole first step, every negotiation ending in an error, then stopped with RuntimeError's
    traceback; now it says so as `negotiator eval` does (exit 3) and records no run."""
    import socket
    import subprocess
    import sys

    out = tmp_path / "run"
    with socket.socket() as s:  # a loopback port nothing listens on, held so no other process takes it meanwhile
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        args = ["--buyer", "hosted_vllm/m", "--buyer-base-url", f"http://127.0.0.1:{port}", "--steps", "1"]
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "negotiator",
                "train",
                "--out",
                str(out),
                "--base",
                "local/tiny-random-gemma",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert p.returncode == 3 and "Traceback" not in p.stderr, p.stderr
    assert f"training buyer cannot connect to http://127.0.0.1:{port} for hosted_vllm/m" in " ".join(p.stderr.split())
    assert not (out / "config.json").exists()


def test_a_sweeps_evaluation_is_checked_before_any_arm_trains(tmp_path, monkeypatch):
    """--eval-suite nosuch and --eval-limit -1 were found out by `negotiator eval` after every arm had trained
    (--eval-limit 0 evaluated the whole suite); without a sweep the two flags were silently ignored."""
    from typer.testing import CliRunner

    import train.run
    import train.sweep
    from negotiator.errors import UsageError

    _register()
    trained = []
    monkeypatch.setattr(train.run, "train", lambda cfg, **kw: trained.append(cfg) or {})
    monkeypatch.setattr(train.sweep, "train", lambda cfg, **kw: trained.append(cfg) or {})
    monkeypatch.setattr(train.sweep, "_run", lambda cmd: None)
    sweep = ["--lr", "1e-3,2e-3"]
    for args, message in [
        ([*sweep, "--eval-suite", "nosuch"], "unknown suite 'nosuch'; choose one of quick, heldout"),
        ([*sweep, "--eval-limit", "-1"], "--eval-limit -1: must be at least 1"),
        ([*sweep, "--eval-limit", "0"], "--eval-limit 0: must be at least 1"),
        (["--eval-suite", "quick"], "--eval-suite and --eval-limit set how a learning-rate sweep (several --lr) is"),
        (["--eval-limit", "5"], "evaluate one trained seller with negotiator eval --seller local/"),
    ]:
        r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "x"), *args])
        assert isinstance(r.exception, UsageError) and message in str(r.exception), (args, r.output)
    assert not trained
    r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "x"), *sweep, "--eval-suite", "quick"])
    assert r.exit_code == 0, r.output
    assert len(trained) == 2


def test_a_resumed_run_steps_over_damaged_lines_in_its_logs(tmp_path):
    """A line of bytes that are not UTF-8 in OUT/episodes.jsonl, or a JSON value that is not an object in
    OUT/metrics.jsonl, ended the rerun that resumes a killed run in a traceback (UnicodeDecodeError,
    AttributeError: 'list' object has no attribute 'get'); such lines are left out as a torn last line was."""
    import json

    from train.outputs import read_metrics, rewind

    rows = [{"step": n, "reward": 0.1 * n, "step_s": 1.0} for n in (1, 2, 3)]
    (tmp_path / "metrics.jsonl").write_bytes(
        b"".join(json.dumps(r).encode() + b"\n" for r in rows)
        + b'[1]\n"x"\n{"no": "step"}\n\xff\xfe\n'
        # rows without the numbers the run reads (a KeyError's traceback once the last step had run)
        + b'{"step": 2}\n{"step": 3, "reward": NaN, "step_s": 1}\n{"step": 3, "reward": 0.1, "step_s": "1"}\n'
        + b'{"step": true, "reward": 0.1, "step_s": 1}\n{"step": 4, "rew'
    )
    episodes = [{"episode_id": f"e{n}", "labels": {"train_step": n}} for n in (1, 2, 3)]
    (tmp_path / "episodes.jsonl").write_bytes(
        b"".join(json.dumps(e).encode() + b"\n" for e in episodes)
        + b'\xff\xfe\n[1]\n{"labels": [1]}\n{"labels": {"train_step": "x"}}\n{"episode_id": "torn'
    )
    assert read_metrics(tmp_path) == rows
    rewind(tmp_path, 2)
    assert read_metrics(tmp_path) == rows[:2]
    kept = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [e["episode_id"] for e in kept] == ["e1", "e2"]


def test_two_rates_that_would_share_an_arms_folder_are_refused():
    """--lr 1e-3,1.000001e-3 trained both arms into OUT/lr0.001: the second was refused as a different run there,
    after the first had trained."""
    import pytest

    from negotiator.cli.train_cmd import _parse_lrs
    from negotiator.errors import UsageError

    with pytest.raises(UsageError, match=r"0\.001 and 0\.001000001 would train into the same folder lr0\.001"):
        _parse_lrs("1e-3,1.000001e-3")
    assert _parse_lrs("1e-3,1.00001e-3") == [1e-3, 1.00001e-3]  # lr0.001 and lr0.00100001


def test_a_step_whose_every_negotiation_failed_stops_the_run_in_one_line(tmp_path):
    """A buyer that fails every call (here scripted/error; a server that went down mid-run alike) ended the run in
    RuntimeError's traceback; now one line that says what failed and how to resume (exit 1)."""
    import subprocess
    import sys

    out = tmp_path / "run"
    args = ["--buyer", "scripted/error", "--steps", "1", "--scenario-seeds", "3-5", "--max-rounds", "3"]
    p = subprocess.run(
        [sys.executable, "-m", "negotiator", "train", "--out", str(out), "--base", "local/tiny-random-gemma", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 1 and "Traceback" not in said, said
    assert "training stopped: every negotiation of step 1 ended in an error, e.g. ProviderError: scripted" in said
    assert f"Its checkpoints are kept in {out}: fix the cause and rerun the same command to resume" in said


def test_a_sweep_evaluates_each_arm_as_the_seller_it_trained_as():
    from negotiator.agent.seller import SellerAgent, strategy_params

    assert strategy_params("none") == "strategy=none"
    assert strategy_params("boulware?candidates=3") == "strategy=boulware&candidates=3"
    seller = SellerAgent(f"scripted/boulware?{strategy_params('boulware?candidates=3')}")
    assert seller.strategy is not None and seller.strategy.candidates == 3


def test_the_cpu_profile_trains_in_bf16_only_where_the_cpu_multiplies_it_natively(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    assert resolve("cpu", out=tmp_path).dtype == "float32"  # emulated bf16 ran 21x slower here
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert resolve("cpu", out=tmp_path).dtype == "bfloat16"
    assert resolve("cpu", out=tmp_path, dtype="float32").dtype == "float32"  # a choice given is kept
    assert resolve("gpu", out=tmp_path).dtype == "bfloat16"


def test_metrics_go_to_the_reporters_asked_for_and_nowhere_by_default(tmp_path):
    """TRL's reporters: --report-to tensorboard|wandb|... (repeatable), none by default (no network, no files)."""
    from train.run import grpo_args

    assert not _train_params()["report_to"] and _train_params()["push_to_hub"] is False
    assert _train_params("--report-to", "tensorboard", "--report-to", "wandb")["report_to"] == ["tensorboard", "wandb"]
    default = resolve("cpu", out=tmp_path / "run")
    assert default.report_to == ["none"] and grpo_args(default).report_to in ([], ["none"], "none")
    board = resolve("cpu", out=tmp_path / "run", report_to=["tensorboard"])
    args = grpo_args(board)
    assert args.report_to == ["tensorboard"] and args.run_name == "run"


def test_a_reporter_that_is_unknown_or_not_installed_is_refused_before_any_work(tmp_path, monkeypatch):
    import pytest

    from negotiator.errors import UsageError

    with pytest.raises(UsageError, match="--report-to tensorbored: choose from none, all, .*tensorboard.*wandb"):
        resolve("cpu", out=tmp_path, report_to=["tensorbored"])
    with pytest.raises(UsageError, match="--report-to none reports nowhere: give it alone"):
        resolve("cpu", out=tmp_path, report_to=["none", "tensorboard"])
    import transformers.integrations.integration_utils as iu

    monkeypatch.setattr(iu, "get_available_reporting_integrations", lambda: [])
    for name, package in (("tensorboard", "tensorboard"), ("wandb", "wandb"), ("comet_ml", "comet-ml")):
        with pytest.raises(
            UsageError, match=f"--report-to {name}: its package is not installed; pip install {package}$"
        ):
            resolve("cpu", out=tmp_path, report_to=[name])


def test_hub_options_need_push_to_hub_and_a_sweep_pushes_nothing(tmp_path):
    import subprocess
    import sys

    import pytest

    from negotiator.errors import UsageError

    assert resolve("cpu", out=tmp_path).push_to_hub is False  # off unless asked
    with pytest.raises(UsageError, match="add --push-to-hub"):
        resolve("cpu", out=tmp_path, hub_model_id="me/seller")

    def run(*args):
        p = subprocess.run(
            [sys.executable, "-m", "negotiator", "train", "--out", str(tmp_path / "x"), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        return p.returncode, " ".join(p.stderr.split())

    code, err = run("--lr", "3e-4,6e-4", "--push-to-hub")
    assert code == 2 and "--push-to-hub pushes one trained seller" in err and "Traceback" not in err
    code, err = run("--report-to", "tensorbored")
    assert code == 2 and "--report-to tensorbored: choose from" in err and "Traceback" not in err
    assert not (tmp_path / "x" / "config.json").exists()


def test_each_warm_start_negotiation_gets_its_own_scenario_by_default(tmp_path, monkeypatch):
    """Without --scenario-seeds the run trains on one scenario per prompt, and at least one per
    --imitate negotiation: 96 demonstrations of a warm start alone (--steps 0) are 96
    scenarios, not the two of one step's prompts."""
    from typer.testing import CliRunner

    import train.run

    seen = []
    monkeypatch.setattr(train.run, "train", lambda cfg, **kw: seen.append(cfg) or {})
    monkeypatch.setattr("negotiator.cli.train_cmd._summary", lambda *a: None)
    decide = ["--strategy", "responsive?menu=moves&words=strategy", "--teacher", "lookahead"]
    for args, count in [(["--steps", "0", "--imitate", "96"], 96), (["--steps", "30", "--imitate", "24"], 60)]:
        r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / str(count)), *decide, *args])
        assert r.exit_code == 0, r.output
        assert seen[-1].scenario_seeds == list(range(count))


def test_sizes_the_base_model_cannot_take_are_refused_before_the_run_folder_is_made(tmp_path):
    """`--lora-layers 99` on a smaller model adapted all of its layers without a word (and a LoRA rank above
    the hidden size or a turn longer than the context trained, or failed deep inside); now each is refused by
    its flag with the model's own size. The cpu profile's default (the top 6 layers) still adapts all of a
    smaller model."""
    from typer.testing import CliRunner

    from negotiator.errors import UsageError
    from train.config import resolve
    from train.run import check_fits_base

    _register()
    tiny = ["--base", "local/tiny-random-gemma", "--steps", "1"]  # 2 decoder layers, hidden size 64, context 8192
    for args, message in [
        (["--lora-layers", "3"], "--lora-layers 3: the base model has 2 decoder layers; give at most 2"),
        (["--lora-r", "65"], "--lora-r 65: above the base model's hidden size (64); give at most 64"),
        (["--max-tokens", "9000"], "--max-tokens 9000: above the base model's context (8192 tokens)"),
    ]:
        out = tmp_path / args[0].strip("-")
        r = CliRunner().invoke(app, ["train", "--out", str(out), *tiny, *args])
        assert isinstance(r.exception, UsageError) and message in str(r.exception), (args, r.output)
        assert not (out / "config.json").exists()  # no run recorded: the corrected command starts afresh
    from train.base_model import resolve_base_path

    path = resolve_base_path("local/tiny-random-gemma")
    check_fits_base(resolve("cpu", out=tmp_path / "ok", base="local/tiny-random-gemma"), path)  # the default 6
    check_fits_base(resolve("cpu", out=tmp_path / "ok", lora_layers=2, lora_r=64, max_tokens=8192), path)


def test_quiet_silences_the_model_librarys_bars_too_and_one_step_is_one_step(tmp_path, monkeypatch):
    """`--quiet` still showed transformers' "Loading weights" and "Writing model shards" bars, and a one-step
    run said "trained 1 steps"."""
    from transformers.utils import logging as hf_logging
    from typer.testing import CliRunner

    import train.run

    _register()
    seen = []

    def fake_train(cfg, **kw):
        seen.append(hf_logging.is_progress_bar_enabled())
        return {"steps": 1, "base_model": cfg.base, "learning_rate": cfg.lr, "final_reward": None}

    monkeypatch.setattr(train.run, "train", fake_train)
    try:
        r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "x"), "--steps", "1", "--quiet"])
    finally:
        hf_logging.enable_progress_bar()
    assert r.exit_code == 0, r.output
    assert seen == [False]
    assert "trained 1 step of local/gemma-3-270m at lr 0.0006" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "y"), "--steps", "1"])
    assert seen == [False, True] and r.exit_code == 0, r.output


def test_a_base_model_that_cannot_be_had_is_refused_before_the_run_is_recorded(tmp_path):
    """A hub id the hub does not give failed after the run folder recorded it (so the corrected command was
    refused as a different run), in a paragraph of the hub's retries; with remote requests blocked it is one
    line, at once, and nothing is recorded."""
    from typer.testing import CliRunner

    from negotiator.errors import UsageError

    _register()
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["train", "--out", str(out), "--base", "nobody/no-such-model", "--steps", "1"])
    assert isinstance(r.exception, UsageError), r.output
    said = str(r.exception)
    assert said.startswith("--base nobody/no-such-model: cannot load its config (remote requests are blocked")
    assert "or a model hub id on a machine that reaches the hub" in said and "\n" not in said
    assert not (out / "config.json").exists()
    r = CliRunner().invoke(app, ["train", "--out", str(out), "--base", "local/tiny-random-gemma", "--lora-r", "65"])
    assert "--lora-r 65" in str(r.exception)  # the folder holds no run: the next command is judged afresh


def test_from_episodes_takes_a_runs_folder_for_its_log(tmp_path, monkeypatch):
    """A run's folder given to --from-episodes was "no such file"; it stands for its episodes.jsonl, and a
    folder without one says so."""
    from typer.testing import CliRunner

    import train.run
    from negotiator.errors import UsageError

    _register()
    trained = []
    monkeypatch.setattr(train.run, "train", lambda cfg, **kw: trained.append(cfg) or {"steps": 1, "base_model": "b"})
    run = tmp_path / "served"
    run.mkdir()
    r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "x"), "--from-episodes", str(run)])
    assert isinstance(r.exception, UsageError) and f"--from-episodes {run}: a folder without episodes.jsonl" in str(
        r.exception
    )
    (run / "episodes.jsonl").write_text("")
    r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "x"), "--from-episodes", str(run)])
    assert [c.from_episodes for c in trained] == [run / "episodes.jsonl"], r.output


def test_a_folder_of_another_run_is_refused_naming_the_flags_that_differ(tmp_path):
    """A rerun with other settings was refused by field names and whole lists ("scenario_seeds: [0, 1, ..., 59]
    there, [0, 1, ..., 79] now" when only --steps had changed; "buyers: None there"); now by the flags, seeds as
    ranges, and the --steps that decided the seeds."""
    import pytest

    from negotiator.errors import UsageError
    from train.config import resolve
    from train.run import prepare_out

    out = tmp_path / "run"
    assert prepare_out(resolve("cpu", out=out, steps=30, dtype="bfloat16")) is None
    assert prepare_out(resolve("cpu", out=out, steps=30, dtype="bfloat16")) is None  # the same run: resumed
    with pytest.raises(UsageError) as e:
        prepare_out(resolve("cpu", out=out, steps=40, dtype="bfloat16"))
    assert str(e.value) == (
        f"{out} already holds a different training run: --scenario-seeds 0-59 there, 0-79 now (without "
        "--scenario-seeds, one per prompt of --steps: 30 steps there, 40 now); choose a new --out folder, or rerun "
        "the command that started it to resume it"
    )
    changed = dict(lr=1e-3, lora_r=8, lora_alpha=16, buyers=["rule/conceder", "rule/linear"], strategy="none")
    with pytest.raises(UsageError) as e:
        prepare_out(resolve("cpu", out=out, steps=30, dtype="bfloat16", **changed))
    assert (
        ": --lr 0.0006 there, 0.001 now; --lora-r 16 there, 8 now; --buyer the default there, rule/conceder, "
        "rule/linear now; --strategy boulware?candidates=3 there, none now; choose a new --out folder" in str(e.value)
    )
    with pytest.raises(UsageError, match="the precision bfloat16 there, float32 on this machine"):
        prepare_out(resolve("cpu", out=out, steps=30, dtype="float32"))
