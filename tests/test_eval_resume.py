"""`negotiator eval --resume` and reruns into a folder: every recorded setting is reused, a changed one is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from negotiator.testing import FakeOpenAIServer

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "200"}
WALK = '{"action": "walk_away", "message": "Not today."}'


def cli(*args, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )


def lines(run) -> list[str]:
    return (run / "episodes.jsonl").read_text().splitlines()


def test_resume_sends_the_remaining_negotiations_to_the_recorded_base_url(tmp_path):
    run = tmp_path / "run"
    with FakeOpenAIServer(lambda req: WALK) as server:
        r = cli(
            "eval",
            "--seller",
            "hosted_vllm/fake?strategy=none",
            "--seller-base-url",
            server.base_url,
            "--buyer",
            "rule/conceder",
            "--limit",
            "4",
            "--concurrency",
            "2",
            "--out",
            str(run),
            "--quiet",
        )
        assert r.returncode == 0, r.stderr
        first = len(server.requests)
        # a kill after two negotiations: the log holds only those
        (run / "episodes.jsonl").write_text("\n".join(lines(run)[:2]) + "\n")
        r = cli("eval", "--resume", str(run), "--quiet")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "2 of 4 negotiations already done" in r.stdout
        assert len(server.requests) > first  # the resumed negotiations reached the recorded server
    episodes = [json.loads(x) for x in lines(run)]
    assert len(episodes) == 4 and all(e["error"] is None and e["outcome"]["ended_by"] == "walk_away" for e in episodes)
    config = json.loads((run / "config.json").read_text())
    assert config["seller_base_url"] == server.base_url and config["concurrency"] == 2 and config["limit"] == 4


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    run = tmp_path_factory.mktemp("resume") / "run"
    r = cli(
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "3",
        "--rate-limit",
        "rule=6000",
        "--out",
        str(run),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    return run


@pytest.mark.parametrize(
    "flag, value, recorded_shown",
    [
        ("--limit", "5", "3"),
        ("--seller", "rule/linear", "rule/boulware"),
        ("--buyer", "rule/linear", "rule/conceder"),
        ("--seed", "1", "0"),
        ("--shard", "0/2", "not set"),
        ("--suite", "heldout", "quick"),
        ("--seller-base-url", "http://127.0.0.1:9/v1", "not set"),
        ("--buyer-base-url", "http://127.0.0.1:9/v1", "not set"),
    ],
)
def test_a_changed_setting_on_resume_is_refused_naming_it(recorded, flag, value, recorded_shown):
    before = (recorded / "config.json").read_bytes()
    r = cli("eval", "--resume", str(recorded), flag, value)
    assert r.returncode == 2, r.stdout + r.stderr
    message = " ".join(r.stderr.split())
    assert f"{flag} {value} differs from the run in {recorded} ({recorded_shown})" in message
    assert "Traceback" not in r.stderr
    assert (recorded / "config.json").read_bytes() == before  # the record is left as it was


def test_the_same_setting_given_again_and_a_new_tunable_one_are_accepted(recorded):
    r = cli(
        "eval", "--resume", str(recorded), "--limit", "3", "--seller", "rule/boulware", "--concurrency", "2", "--quiet"
    )
    assert r.returncode == 0, r.stderr
    assert "3 of 3 negotiations already done" in r.stdout
    config = json.loads((recorded / "config.json").read_text())
    assert config["concurrency"] == 2 and config["limit"] == 3
    assert config["rate_limits"] == {"rule": 6000.0}  # reused from the record: it was not given again


def test_a_rerun_into_the_folder_must_repeat_its_endpoints(tmp_path):
    run = tmp_path / "run"
    with FakeOpenAIServer(lambda req: WALK) as server:
        args = [
            "eval",
            "--seller",
            "hosted_vllm/fake",
            "--buyer",
            "rule/conceder",
            "--limit",
            "1",
            "--out",
            str(run),
            "--quiet",
        ]
        assert cli(*args, "--seller-base-url", server.base_url).returncode == 0
        r = cli(*args, "--seller-base-url", server.base_url.replace("/v1", "/v2"))
    assert r.returncode == 2 and "already holds a different run" in r.stderr
    assert f"--seller-base-url was {server.base_url}, now" in " ".join(r.stderr.split())


def test_a_rerun_with_a_larger_limit_extends_the_run_and_says_so(tmp_path):
    run = tmp_path / "run"
    args = ["eval", "--seller", "rule/boulware", "--buyer", "rule/conceder", "--out", str(run), "--quiet"]
    assert cli(*args, "--limit", "2").returncode == 0
    r = cli(*args, "--limit", "4")
    assert r.returncode == 0, r.stderr
    assert (
        "planned with --limit 2; it now plans 4 negotiations" in r.stdout
        and "2 of 4 negotiations already done" in r.stdout
    )
    assert len(lines(run)) == 4 and json.loads((run / "config.json").read_text())["limit"] == 4


def test_a_limit_beyond_the_plan_gets_a_note(tmp_path):
    r = cli(
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "12",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert "--limit 12 is more than the 6 negotiations of quick with this buyer: running all 6" in r.stdout
    assert len(lines(tmp_path / "run")) == 6
    r = cli(
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "6",
        "--out",
        str(tmp_path / "run6"),
        "--quiet",
    )
    assert r.returncode == 0 and "note:" not in r.stdout


def test_the_note_counts_the_shard(tmp_path):
    r = cli(
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--shard",
        "1/4",
        "--limit",
        "10",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert "--limit 10 is more than the 2 negotiations of shard 1/4 of quick with this buyer: running all 2" in r.stdout
    assert len(lines(tmp_path / "run")) == 2
