"""What the command line costs before it works, and rule-vs-rule throughput through it.

    python benchmarks/startup.py                                   # start-up and the held-out suite
    python benchmarks/startup.py --negmas-python /tmp/negmas-venv/bin/python   # and NegMAS beside it
    python benchmarks/startup.py --importtime                      # where an eval's import time goes
    git archive 52a9c11 | tar -x -C /tmp/before                      # an earlier version's source ...
    python benchmarks/startup.py --baseline /tmp/before            # ... timed beside this one (start-up and the suite)

Every figure runs the CLI as a user does: a new process each time, timed from outside, the
median of several repetitions, the measurements of different commands interleaved so a
shared machine's load moves them together:

* ``python -c pass``: the interpreter alone, the floor.
* ``negotiator --help``.
* ``negotiator eval`` of one rule-vs-rule negotiation (``--seller rule/boulware --buyer
  rule/conceder --limit 1``): start-up, plan, one negotiation, the log, the summary.
* the held-out suite, rule vs rule (``negotiator eval --suite heldout --seller rule/boulware``,
  or ``--seller rule/responsive``: 1,152 negotiations, start-up included), in negotiations
  per second.

``--negmas-python`` runs the same negotiations in NegMAS (a peer library, AGPL: install it in
a throwaway virtual environment outside this repository, never as a dependency) as one
process, start-up included: the held-out suite's scenarios and buyers, exported from this
checkout, a Boulware time-based seller against the persona's tactic mapped to NegMAS's
negotiators. ``--negmas-grid 11`` (the default) puts each numeric issue on an 11-point grid
(the grid negotiator's rule parties search before they fine-tune the price to the exact
target): NegMAS then negotiates over a few hundred outcomes, fewer than the scenario has.
``--negmas-grid full`` gives it the scenario's own outcome space (every step of every numeric
issue); that is slow in NegMAS, so ``--negmas-every 12`` plays every 12th negotiation only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1"}
ENV.pop("OTEL_TRACES_EXPORTER", None)


def negotiator_cmd() -> list[str]:
    """The console script next to this interpreter (as installed), else ``python -m negotiator``."""
    script = Path(sys.executable).with_name("negotiator")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "negotiator"]


# NegMAS on the 11-point grid as docs/benchmarks.md first recorded it (a slower machine): issue 16's 5x is against it.
RECORDED_NEGMAS = 34.2

CPU: dict[str, list[float]] = defaultdict(list)  # CPU seconds (user + sys) of each timed process, by label


def timed(cmd: list[str], cwd: Path, env: dict | None = None, label: str | None = None) -> float:
    """Wall seconds of one process; its CPU seconds go to ``CPU[label]`` (they move less with the machine's load)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    if label:
        CPU[label].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


# --- NegMAS ---------------------------------------------------------------------------

# Persona tactics (negotiator.buyers.rules.STRATEGIES) -> NegMAS negotiators of the same kind.
NEGMAS_TACTICS = {
    "boulware": "BoulwareTBNegotiator",
    "linear": "LinearTBNegotiator",
    "conceder": "ConcederTBNegotiator",
    "tit_for_tat": "NaiveTitForTatNegotiator",
    "hardliner": "ToughNegotiator",
    "threatener": "BoulwareTBNegotiator",
}

NEGMAS_RUN = r"""
import json, sys
from negmas import SAOMechanism, make_issue
from negmas.outcomes import make_os
from negmas.preferences import LinearAdditiveUtilityFunction
from negmas.preferences.value_fun import TableFun
import negmas.sao as sao

jobs = json.load(open(sys.argv[1]))
games = {}
agreements = 0
for job in jobs:
    game = games.get(job["scenario"])
    if game is None:
        issues = [make_issue(list(i["values"]), i["name"]) for i in job["issues"]]
        space = make_os(issues)
        def ufun(side):
            return LinearAdditiveUtilityFunction(
                values={k: TableFun({v: u for v, u in table}) for k, table in side["table"].items()},
                weights=side["weights"], outcome_space=space, reserved_value=side["reservation"])
        game = games[job["scenario"]] = (issues, ufun(job["seller"]), ufun(job["buyer"]))
    issues, seller_u, buyer_u = game
    m = SAOMechanism(issues=issues, n_steps=job["rounds"])
    seller = (sao.BoulwareTBNegotiator(name="seller"), seller_u)
    buyer = (getattr(sao, job["tactic"])(name="buyer"), buyer_u)
    for negotiator, u in ([seller, buyer] if job["opener"] == "seller" else [buyer, seller]):
        m.add(negotiator, ufun=u)
    agreements += m.run().agreement is not None
print(json.dumps({"negotiations": len(jobs), "agreements": agreements}))
"""


def export_heldout(path: Path, grid: str = "11", every: int = 1) -> int:
    """The held-out suite's negotiations for one rule seller arm, as plain data for another library."""
    from evals.runner import plan
    from evals.suites import get_suite
    from negotiator.buyers.personas import get_persona
    from negotiator.models.specs import parse_spec

    def side(prefs, issues):
        table = {i.name: [(v, prefs.values[i.name](v)) for v in values] for i, values in issues}
        return {"weights": prefs.weights, "reservation": prefs.reservation, "table": table}

    out = []

    def values(issue):
        if issue.kind == "discrete":
            return list(issue.options)
        return issue.grid(11 if grid == "11" else int(round((issue.high - issue.low) / issue.step)) + 1)

    for job in plan(get_suite("heldout"), "rule/boulware")[::every]:
        s = job.scenario
        issues = [(i, values(i)) for i in s.space.issues]
        buyer = parse_spec(job.buyer)
        tactic = parse_spec(get_persona(job.persona).rule_spec).name if buyer.name == "persona" else buyer.name
        out.append(
            {
                "scenario": s.id,
                "rounds": s.max_rounds,
                "opener": s.opener,
                "tactic": NEGMAS_TACTICS[tactic],
                "issues": [{"name": i.name, "values": values} for i, values in issues],
                "seller": side(s.seller, issues),
                "buyer": side(s.buyer, issues),
            }
        )
    path.write_text(json.dumps(out))
    return len(out)


# --- import time ----------------------------------------------------------------------


def importtime(cwd: Path) -> None:
    """Cumulative import time of an eval's top-level packages (``python -X importtime``)."""
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "negotiator",
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "1",
        "--out",
        str(cwd / "importtime"),
        "--quiet",
    ]
    r = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    by_package: dict[str, int] = defaultdict(int)
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) == 1:  # top-level imports: their cumulative time
            by_package[m.group(4).split(".")[0]] += int(m.group(2))
    total = sum(by_package.values())
    print(f"\nimport time of `negotiator eval` (rule vs rule, one negotiation): {total / 1e6:.3f} s in all")
    for name, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {name:<28} {us / 1e6:7.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7, help="repetitions of each start-up measurement (median)")
    ap.add_argument("--suite-reps", type=int, default=3, help="repetitions of the held-out suite (median)")
    ap.add_argument("--negmas-python", help="a Python interpreter with negmas installed (a throwaway venv)")
    ap.add_argument(
        "--negmas-grid",
        choices=("11", "full"),
        default="11",
        help="NegMAS's numeric issues: an 11-point grid, or every step",
    )
    ap.add_argument("--negmas-every", type=int, default=1, help="NegMAS plays every K-th negotiation of the suite")
    ap.add_argument("--importtime", action="store_true", help="also show where an eval's import time goes")
    ap.add_argument(
        "--seller", default="rule/boulware", help="the rule seller of the held-out suite's timing (rule/responsive ...)"
    )
    ap.add_argument(
        "--baseline", type=Path, help="the source tree of another negotiator version (git archive ...), timed alongside"
    )
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="negotiator-startup-"))
    cli = negotiator_cmd()
    try:
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
    except OSError:
        load = "?"
    print(f"{os.cpu_count()} CPUs, load average {load}; {' '.join(cli)}")

    times: dict[str, list[float]] = defaultdict(list)
    for rep in range(args.reps):
        times["python -c pass"].append(timed([sys.executable, "-c", "pass"], work, label="python -c pass"))
        times["negotiator --help"].append(timed([*cli, "--help"], work, label="negotiator --help"))
        out = work / f"one-{rep}"
        one = [
            "eval",
            "--seller",
            "rule/boulware",
            "--buyer",
            "rule/conceder",
            "--limit",
            "1",
            "--out",
            str(out),
            "--quiet",
        ]
        label = "negotiator eval (rule vs rule, 1 negotiation)"
        times[label].append(timed([*cli, *one], work, label=label))
        shutil.rmtree(out, ignore_errors=True)
        if args.baseline:  # the other version's source first on the path, this interpreter and packages
            env = {**ENV, "PYTHONPATH": str(args.baseline.resolve())}
            for label, argv in (
                ("baseline: negotiator --help", ["--help"]),
                ("baseline: negotiator eval (1 negotiation)", one),
            ):
                times[label].append(timed([sys.executable, "-m", "negotiator", *argv], work, env, label=label))
            shutil.rmtree(out, ignore_errors=True)
    floor = statistics.median(times["python -c pass"])
    print(f"\n{'start-up (median of ' + str(args.reps) + ')':<48} {'seconds':>8} {'minus python':>13} {'CPU s':>7}")
    for name, xs in times.items():
        m = statistics.median(xs)
        print(f"{name:<48} {m:8.3f} {m - floor:13.3f} {statistics.median(CPU[name]):7.3f}")
    if args.baseline:
        for what, new, old in (
            ("--help", "negotiator --help", "baseline: negotiator --help"),
            ("eval", "negotiator eval (rule vs rule, 1 negotiation)", "baseline: negotiator eval (1 negotiation)"),
        ):
            print(
                f"baseline / this version, {what}: {statistics.median(times[old]) / statistics.median(times[new]):.2f}x"
            )

    jobs_file = work / "heldout.json"
    n_negmas = export_heldout(jobs_file, args.negmas_grid, args.negmas_every) if args.negmas_python else 0
    n = 1152
    suite: dict[str, list[float]] = defaultdict(list)
    for rep in range(args.suite_reps):
        out = work / f"heldout-{rep}"
        suite["negotiator"].append(
            timed(
                [*cli, "eval", "--suite", "heldout", "--seller", args.seller, "--out", str(out), "--quiet"],
                work,
                label="negotiator",
            )
        )
        lines = len((out / "episodes.jsonl").read_text().splitlines())
        assert lines == n, f"the suite logged {lines} negotiations, not {n}"
        shutil.rmtree(out, ignore_errors=True)
        suite["negotiator, 1 process"].append(
            timed(
                [
                    *cli,
                    "eval",
                    "--suite",
                    "heldout",
                    "--seller",
                    args.seller,
                    "--workers",
                    "1",
                    "--out",
                    str(out),
                    "--quiet",
                ],
                work,
                label="negotiator, 1 process",
            )
        )
        shutil.rmtree(out, ignore_errors=True)
        if args.baseline:  # the other version's suite, interleaved with this one's
            env = {**ENV, "PYTHONPATH": str(args.baseline.resolve())}
            suite["baseline"].append(
                timed(
                    [
                        sys.executable,
                        "-m",
                        "negotiator",
                        "eval",
                        "--suite",
                        "heldout",
                        "--seller",
                        args.seller,
                        "--out",
                        str(out),
                        "--quiet",
                    ],
                    work,
                    env,
                    label="baseline",
                )
            )
            shutil.rmtree(out, ignore_errors=True)
        if args.negmas_python:
            script = work / "negmas_run.py"
            script.write_text(NEGMAS_RUN)
            suite["NegMAS"].append(timed([args.negmas_python, str(script), str(jobs_file)], work, label="NegMAS"))
    print(
        f"\nheld-out suite, {args.seller} vs the suite's rule buyers, start-up included (median of {args.suite_reps}); "
        "negotiator as it runs by default"
        f" (--workers auto: {min(os.cpu_count() or 1, 8)} processes here) and in one process, NegMAS in one"
    )
    rates = {}
    for name, xs in suite.items():
        m = statistics.median(xs)
        count = n_negmas if name == "NegMAS" else n
        rates[name] = count / m
        label = {
            "baseline": "baseline negotiator",
            "NegMAS": f"NegMAS ({args.negmas_grid}-point grid)" if args.negmas_grid == "11" else "NegMAS (full space)",
        }.get(name, name)
        cpu = statistics.median(CPU[name])
        print(
            f"  {label:<26} {count:5d} negotiations {m:8.2f} s {count / m:8.1f} negotiations/s; CPU {cpu:6.2f} s, "
            f"{count / cpu:6.1f} per CPU second   (runs: {', '.join(f'{x:.2f}' for x in xs)})"
        )
    if "baseline" in rates:
        print(
            f"  this version / baseline: {rates['negotiator'] / rates['baseline']:.2f}x (wall), "
            f"{statistics.median(CPU['baseline']) / statistics.median(CPU['negotiator']):.2f}x (CPU)"
        )
    if "NegMAS" in rates:
        for name in ("negotiator", "negotiator, 1 process"):
            cpu_ratio = (n / statistics.median(CPU[name])) / (n_negmas / statistics.median(CPU["NegMAS"]))
            print(f"  {name} / NegMAS: {rates[name] / rates['NegMAS']:.2f}x (wall), {cpu_ratio:.2f}x (per CPU second)")
    print(
        f"  negotiator / the NegMAS figure on record ({RECORDED_NEGMAS}/s, docs/benchmarks.md, another machine): "
        f"{rates['negotiator'] / RECORDED_NEGMAS:.2f}x"
    )
    if args.importtime:
        importtime(work)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
