"""The command line, run as a user runs it: a subprocess, its output and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}


def cli(*args, input: str | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        env=ENV,
        input=input,
        timeout=timeout,
    )


def test_eval_runs_offline_and_writes_episodes_and_summary(tmp_path):
    out = tmp_path / "run"
    r = cli(
        "eval",
        "--seller",
        "scripted/boulware",
        "--buyer",
        "rule/conceder",
        "--buyer",
        "rule/boulware",
        "--limit",
        "6",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "seller score" in r.stdout and "rule/conceder" in r.stdout
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["n"] == 6 and set(summary["by_buyer"]) == {"rule/conceder", "rule/boulware"}
    assert 0 < summary["overall"]["seller_score"] <= 1
    # Rerunning resumes: nothing runs twice.
    r2 = cli(
        "eval",
        "--seller",
        "scripted/boulware",
        "--buyer",
        "rule/conceder",
        "--buyer",
        "rule/boulware",
        "--limit",
        "6",
        "--out",
        str(out),
    )
    assert r2.returncode == 0 and "6 of 6 negotiations already done" in r2.stdout
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 6
    # A different run into the same folder is refused.
    r3 = cli("eval", "--seller", "rule/linear", "--limit", "1", "--out", str(out))
    assert r3.returncode == 2 and "already holds a different run" in r3.stderr


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("eval", "--seller", "gpt4"), 2, "provider prefix"),
        (("eval", "--seller", "rule/bolware"), 2, "unknown rule strategy"),
        (("eval", "--suite", "nope"), 2, "unknown suite"),
        (("eval", "--shard", "3"), 2, "i/n"),
        (("eval", "--concurrency", "x"), 2, "concurrency"),
        (("eval", "--seller", "hosted_vllm/m", "--seller-base-url", "http://127.0.0.1:9"), 3, "cannot connect"),
        (("eval", "--seller", "openai/gpt-4o-mini", "--buyer", "rule/linear"), 2, "remote requests are blocked"),
    ],
)
def test_bad_input_gets_a_clear_error_and_exit_code(tmp_path, args, code, message):
    r = cli(*args, "--out", str(tmp_path / "x"))
    assert r.returncode == code, (r.stdout, r.stderr)
    assert message in (r.stderr + r.stdout)
    assert "Traceback" not in r.stderr


def test_missing_api_key_is_reported_as_unreachable(tmp_path):
    env = {k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"}
    env["NEGOTIATOR_BLOCK_REMOTE"] = "0"
    r = subprocess.run(
        [sys.executable, "-m", "negotiator", "eval", "--seller", "openai/gpt-4o-mini", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 3 and "OPENAI_API_KEY" in r.stderr


def test_scenarios_list_and_show():
    r = cli("scenarios", "list", "--count", "3")
    assert r.returncode == 0 and "furniture-0" in r.stdout
    r = cli("scenarios", "show", "3", "--json")
    data = json.loads(r.stdout)
    assert data["id"] == "saas_seats-3" and data["seller"]["reservation"] > 0
    r = cli("scenarios", "show", "3")
    assert "Nash bargaining point" in r.stdout


def test_play_lets_a_person_be_the_buyer():
    # furniture-10000003? use a seller-opens scenario: the person answers the seller's opening.
    moves = (
        "help\noffer price=abc\noffer price=700 delivery_days=3 assembly=included payment_terms=net60 : hi there\naccept\n"
        * 3
    )
    r = cli("play", "--seller", "rule/conceder", "--scenario", "0", input=moves, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "price must be a number" in r.stdout
    assert ("Deal" in r.stdout) or ("No deal" in r.stdout)


def test_play_says_a_seller_cannot_be_reached_before_the_game_starts():
    # Before, the intro and the help were shown, then the first seller turn stopped on LiteLLM's
    # "InternalServerError: ... Missing credentials" (exit 1); eval said it in one line, exit 3
    import socket

    env = {k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"}
    no_key = subprocess.run(
        [sys.executable, "-m", "negotiator", "play", "--seller", "openai/gpt-4o-mini"],
        capture_output=True,
        text=True,
        env={**env, "NEGOTIATOR_BLOCK_REMOTE": "0"},
        input="",
        timeout=120,
    )
    assert no_key.returncode == 3, (no_key.stdout, no_key.stderr)
    assert " ".join(no_key.stderr.split()).startswith(
        "model unreachable: openai/gpt-4o-mini needs OPENAI_API_KEY in the environment"
    )
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        down = cli("play", "--seller", "hosted_vllm/m", "--seller-base-url", url, input="")
    assert down.returncode == 3 and f"cannot connect to {url} for hosted_vllm/m" in " ".join(down.stderr.split())
    typo = cli("play", "--seller", "opneai/gpt-4o-mini", input="")
    assert typo.returncode == 2 and "'opneai' is not a LiteLLM provider" in typo.stderr
    for r in (no_key, down, typo):
        assert r.stdout == "" and "Traceback" not in r.stderr  # nothing of the game was shown


def first_column(table_text: str) -> str:
    """The first column's cells of a rich table as printed, the pieces of each wrapped value joined."""
    return "".join(line.split("│")[1].strip() for line in table_text.splitlines() if line.startswith("│"))


@pytest.mark.parametrize(
    "args, first",
    [
        (("play", "--seller", "rule/boulware", "--scenario", "10000000"), "price_per_seatseatscontract_months"),
        (("scenarios", "list", "--count", "3"), "furniture-0b2b_supplies-1furniture-2"),
        (("scenarios", "show", "3"), "price_per_seatseatscontract_monthssupportonboarding"),
        (("models", "list"), "gemma-3-270mtiny-random-gemmagemma-3-270m-sellergemma-3-270m-reader"),
    ],
    ids=["play", "scenarios list", "scenarios show", "models list"],
)
def test_a_terminal_40_columns_wide_sees_every_value_whole(args, first, tmp_path):
    # Before, the tables cut what did not fit to an ellipsis: the player read "price_…", "self_s…",
    # "299..5…", and scenarios list was a grid of "fu…", "0…"
    env = {**ENV, "COLUMNS": "40", "NEGOTIATOR_HOME": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        env=env,
        input="walk\n",
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    table = [line for line in r.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 40
    assert first in first_column(r.stdout)


@pytest.mark.parametrize(
    "args, option",
    [
        (("scenarios", "list", "--start", "-5", "--count", "2"), "'--start'"),
        (("scenarios", "show", "--", "-1"), "'seed'"),
        (("play", "--scenario", "-1"), "'--scenario'"),
    ],
)
def test_a_negative_scenario_seed_is_refused(args, option):
    # Before, seed -5 was a scenario named "saas_seats--5", which `scenarios show -5` could not ask for
    r = cli(*args, input="")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert f"Invalid value for {option}: Input should be greater than or equal to 0" in r.stderr


@pytest.mark.parametrize("name", ["gemma3-270m", "./my-adapter"])
def test_models_prepare_names_what_it_can_prepare(name):
    # Before: "prepared models are gemma-3-270m, tiny-random-gemma, or pass a path ... (local/PATH)": not what
    # models prepare takes (it prepares the shipped sellers too, and no path)
    r = cli("models", "prepare", name)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert " ".join(r.stderr.split()) == (
        f"error: unknown model {name!r}: models prepare takes one of gemma-3-270m, tiny-random-gemma, "
        "gemma-3-270m-seller, gemma-3-270m-reader. A model or LoRA adapter folder of your own needs no preparing: "
        "use it as --seller local/PATH"
    )


def test_scenarios_list_json_is_one_scenario_a_line_as_show_prints_it():
    env = {**ENV, "COLUMNS": "40"}  # a narrow terminal wraps no line of it
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "negotiator", "scenarios", *a], capture_output=True, text=True, env=env, timeout=120
    )
    r = run("list", "--start", "7", "--count", "3", "--template", "used_car", "--json")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["used_car-7", "used_car-8", "used_car-9"]
    assert json.loads(lines[1]) == json.loads(run("show", "8", "--template", "used_car", "--json").stdout)
    bad = run("list", "--template", "boat", "--json")
    assert bad.returncode == 2 and bad.stdout == "" and "unknown scenario template 'boat'" in bad.stderr


def test_scenarios_show_and_list_the_scenarios_of_generator_2():
    """`heldout@v2`, `quick@v2` and the example shop play generator 2's scenarios, which share their ids
    with generator 1's; `scenarios` showed generator 1's only, so the price range a v2 run played
    could not be looked up."""
    from negotiator.domain.generator import generate

    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "negotiator", "scenarios", *a], capture_output=True, text=True, env=ENV, timeout=120
    )
    for gen in (1, 2):
        price = next(i for i in generate(3, "furniture", version=gen).issues if i.name == "price")
        shown = json.loads(run("show", "3", "--template", "furniture", "--generator", str(gen), "--json").stdout)
        assert next(i for i in shown["issues"] if i["name"] == "price")["high"] == price.high
        listed = run(
            "list", "--start", "3", "--count", "1", "--template", "furniture", "--generator", str(gen), "--json"
        )
        assert json.loads(listed.stdout) == shown
    v1, v2 = (generate(3, "furniture", version=g) for g in (1, 2))
    assert next(i for i in v2.issues if i.name == "price").high < next(i for i in v1.issues if i.name == "price").high
    bad = run("show", "3", "--generator", "3")
    assert bad.returncode == 2 and "unknown scenario generator version 3; choose one of 1, 2" in bad.stderr


def test_play_stopped_by_a_provider_error_exits_3_as_eval_does():
    # Before: exit 1, the code of a bug; docs/cli.md's table gives 3 to a negotiation ended by a provider error
    r = cli("play", "--seller", "scripted/error", input="walk\n")
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "The negotiation stopped on an error (seller): scripted 401: invalid API key" in r.stdout


def test_models_list_says_a_cache_home_that_is_a_file(tmp_path):
    # Before: exit 0 and a table of "not prepared" models "in notes.txt/models"
    f = tmp_path / "notes.txt"
    f.write_text("not a folder\n")
    for home in (f, f / "home"):
        r = subprocess.run(
            [sys.executable, "-m", "negotiator", "models", "list"],
            capture_output=True,
            text=True,
            env={**ENV, "NEGOTIATOR_HOME": str(home)},
            timeout=60,
        )
        assert r.returncode == 2 and r.stdout == "", r.stdout
        assert " ".join(r.stderr.split()) == (
            f"error: NEGOTIATOR_HOME {home}: {f} is a file, not a folder; set NEGOTIATOR_HOME to a folder "
            "(it is created if missing)"
        )


def test_a_ctrl_c_no_command_handles_says_interrupted():
    """typer answers a Ctrl-C with exit code 130 and no word; a person at `negotiator scenarios list
    --count 100000000` saw the command end silently. Now it says `interrupted`, once."""
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "scenarios", "list", "--count", "100000000", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1"},
    )
    assert proc.stdout is not None and proc.stdout.readline().startswith('{"id"')  # it is listing
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted", err
