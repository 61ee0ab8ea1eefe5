"""`negotiator view runs/`: the report over a folder of runs, served on loopback, live in a real browser."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser import chromium_page

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}


def cli(*args, cwd=None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=timeout
    )


class Viewer:
    """`negotiator view FOLDER --port 0` as a user starts it; its URL read from what it prints."""

    def __init__(self, folder: Path, log: Path):
        self.log = log
        self.out = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "negotiator", "view", str(folder), "--port", "0"],
            env=ENV,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            m = re.search(r"http://127\.0\.0\.1:\d+/", log.read_text())
            if m:
                self.url = m.group()
                return
            if self.proc.poll() is not None:
                raise RuntimeError(log.read_text())
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"negotiator view printed no address:\n{log.read_text()}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Ctrl-C
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        return self.proc.returncode


@pytest.fixture
def viewer(tmp_path):
    started: list[Viewer] = []

    def start(folder: Path) -> Viewer:
        started.append(Viewer(folder, tmp_path / f"view-{len(started)}.log"))
        return started[-1]

    yield start
    for v in started:
        v.stop()


def arms_rows(page) -> dict[str, str]:
    """arm -> n, as the page's arms table shows them."""
    rows = page.locator("table.arms tbody tr")
    return {
        rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("td").nth(1).inner_text()
        for i in range(rows.count())
    }


@pytest.mark.browser
def test_the_viewer_serves_the_runs_under_a_folder_and_refreshes_as_episodes_land(tmp_path, viewer):
    runs = tmp_path / "runs"
    a = runs / "boulware"
    assert cli("eval", "--seller", "rule/boulware", "--limit", "4", "--out", str(a), "--quiet").returncode == 0
    v = viewer(runs)
    with chromium_page() as page:
        page.goto(v.url)
        assert arms_rows(page) == {"rule/boulware": "4"}
        assert "4 negotiations in 1 run" in page.locator(".live").inner_text()
        # open a transcript: the state is in the address, and survives the refresh
        page.locator("table.arms tbody tr").first.click()
        page.wait_for_function("location.hash.startsWith('#transcripts')")
        hash_before = page.evaluate("location.hash")
        # episodes land: the same run extended, and a second seller beside it
        assert cli("eval", "--seller", "rule/boulware", "--limit", "8", "--out", str(a), "--quiet").returncode == 0
        page.wait_for_function(
            "document.querySelector('table.arms tbody tr td:nth-child(2)')?.innerText === '8'", timeout=60_000
        )
        assert page.evaluate("location.hash") == hash_before
        assert (
            cli("eval", "--seller", "rule/linear", "--limit", "8", "--out", str(runs / "linear"), "--quiet").returncode
            == 0
        )
        page.wait_for_function("document.querySelectorAll('table.arms tbody tr').length === 2", timeout=60_000)
        assert arms_rows(page) == {"rule/boulware": "8", "rule/linear": "8"}
        pair = page.locator("table.comparisons tbody tr").first.inner_text()
        assert "rule/boulware" in pair and "rule/linear" in pair  # and the paired comparison of the two
    assert not (runs / "report").exists()  # the viewer writes nothing into the folder it serves
    assert v.stop() == 0 and "stopped" in v.log.read_text()


def test_the_viewer_listens_on_loopback_only_and_waits_for_a_first_run(tmp_path, viewer):
    runs = tmp_path / "runs"
    runs.mkdir()
    v = viewer(runs)
    assert v.url.startswith("http://127.0.0.1:")
    page = httpx.get(v.url, timeout=30)
    assert page.status_code == 200 and "Waiting for runs" in page.text
    before = httpx.get(v.url + "version", timeout=30).json()
    assert before["runs"] == 0
    assert (
        cli("eval", "--seller", "rule/boulware", "--limit", "2", "--out", str(runs / "a" / "b"), "--quiet").returncode
        == 0
    )
    after = httpx.get(v.url + "version", timeout=30).json()
    assert after["runs"] == 1 and after["version"] != before["version"]  # a run two folders down is found
    page = httpx.get(v.url, timeout=60)
    assert page.status_code == 200 and "rule/boulware" in page.text and "2 negotiations in 1 run" in page.text
    assert httpx.get(v.url + "favicon.ico", timeout=30).status_code == 204  # no 404 in the browser console
    assert httpx.get(v.url + "elsewhere", timeout=30).status_code == 404


def test_view_refuses_what_is_not_a_folder(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    for target in (a_file, tmp_path / "missing"):
        r = cli("view", str(target))
        assert r.returncode == 2 and "is not a folder" in r.stderr and "Traceback" not in r.stderr


def test_view_refuses_a_port_out_of_range(tmp_path):
    """--port 70000 was an OverflowError traceback (exit code 1)."""
    for port in ("70000", "-1"):
        r = cli("view", str(tmp_path), "--port", port)
        assert r.returncode == 2 and f"--port {port}: choose 0..65535" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.browser
def test_the_page_says_which_lines_it_left_out_and_escapes_what_runs_hold(tmp_path, viewer):
    """Damaged lines in the middle of a log were left out without a word (`negotiator report` warns of
    them); a torn last line is a run still being written and is no damage. Names and messages from a
    run's files are text on the page, never markup."""
    import json

    runs = tmp_path / "runs"
    assert cli("eval", "--seller", "rule/boulware", "--limit", "3", "--out", str(runs / "a"), "--quiet").returncode == 0
    log = runs / "a" / "episodes.jsonl"
    lines = log.read_text().splitlines()
    evil = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    first = json.loads(lines[0])
    first["seller"]["spec"] += evil
    first["turns"][0]["action"]["message"] += evil
    config = json.loads((runs / "a" / "config.json").read_text())
    config["seller"] += evil  # the arm's name
    (runs / "a" / "config.json").write_text(json.dumps(config))
    torn = lines[2][:300]  # a line the writer has not finished
    log.write_text("\n".join([json.dumps(first), "{not json", lines[1], "[]", lines[2], torn]))
    v = viewer(runs)
    with chromium_page() as page:
        page.goto(v.url)
        warning = page.locator(".damage").inner_text()
        assert warning.startswith(f"warning: {log}: 2 damaged lines left out (line 2: is not JSON")
        assert "line 4: is not an episode (a JSON object)" in warning and "line 6" not in warning
        assert "3 negotiations in 1 run" in page.locator(".live").inner_text()
        assert f"rule/boulware{evil}\t3\t" in page.locator("table.arms").inner_text()  # shown as text
        assert page.locator("script", has_text="pwned").count() == 0 and page.locator("img[onerror]").count() == 0
        assert page.evaluate("window.pwned") is None  # and not run


def test_the_viewer_answers_only_to_its_own_address(tmp_path, viewer):
    """A page on another site whose name resolves to 127.0.0.1 (DNS rebinding) could read the report,
    transcripts and the business's limits in them: every request was answered whatever its Host."""
    runs = tmp_path / "runs"
    runs.mkdir()
    v = viewer(runs)
    port = v.url.rsplit(":", 1)[1].rstrip("/")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(v.url + "version", headers={"Host": host}, timeout=30).status_code == 200
    for path in ("", "version"):
        r = httpx.get(v.url + path, headers={"Host": f"attacker.example:{port}"}, timeout=30)
        assert r.status_code == 403 and r.text == f"negotiator view answers at http://127.0.0.1:{port}/ only"


def test_a_run_with_a_damaged_config_is_left_out_with_a_notice(tmp_path, viewer):
    """One run whose config.json was damaged turned the whole page into a 500: the other runs were
    not shown either. It is now left out, and the page says why and how to repair it."""
    runs = tmp_path / "runs"
    for name in ("a", "b"):
        r = cli("eval", "--seller", "rule/boulware", "--limit", "2", "--out", str(runs / name), "--quiet")
        assert r.returncode == 0, r.stderr
    (runs / "b" / "config.json").write_text('{"seller": <b>')
    v = viewer(runs)
    page = httpx.get(v.url, timeout=120)
    assert page.status_code == 200
    assert "2 negotiations in 1 run under" in page.text
    assert f"{runs / 'b'} left out: {runs / 'b' / 'config.json'} is damaged (line 1, column 12" in page.text
    (runs / "a" / "config.json").write_text("[]")  # now no run can be read: the page says so, not "waiting"
    page = httpx.get(v.url, timeout=120)
    assert page.status_code == 200 and "No run to show" in page.text and "Waiting for runs" not in page.text
    assert f"{runs / 'a'} left out: {runs / 'a' / 'config.json'} is not a run configuration" in page.text
