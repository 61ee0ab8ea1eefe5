"""The embedded local seller, measured side by side in one run on this machine.

1. Throughput at the eval's concurrency: ``--concurrency`` real seller prompts from the
   quick suite, in flight at once, through the whole local seller path (LiteLLM -> HTTP ->
   the local server's batching -> constrained ``generate``), against raw batched
   ``model.generate`` on the same model, prompts and batch size, greedy, unconstrained,
   generating as many tokens per row as the local path did on average (goal: ratio >= 0.8).
   The engine's own batched ``generate`` (grammar and sampling, no HTTP) is shown between
   the two, to tell the grammar's cost from the server's.
2. ``negotiator eval`` on the quick suite, as a user runs it (default seller
   local/gemma-3-270m): wall time, tokens, and the format adherence of the base 270M:
   first-attempt valid rate (goal >= 95%), invalid answers after retries (turns that ended
   on a fallback action), invalid share of all answers. ``--unconstrained`` adds the same
   eval without constrained decoding (local/gemma-3-270m?grammar=off), for comparison.
3. ``--vs-transformers-serve``: the same prompts through ``transformers serve
   --continuous-batching`` (it refuses ``response_format``): tokens/s and valid answers.

    python benchmarks/local_throughput.py [--concurrency 8] [--rounds 3] [--unconstrained]
                                          [--vs-transformers-serve] [--json FILE]

Run it on a quiet machine: it reports the load average it ran under.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the local server runs (before torch loads)

from evals.prompts import first_seller_turns  # noqa: E402
from negotiator.models.base import ModelRequest  # noqa: E402
from negotiator.models.local import local_model, local_servers  # noqa: E402
from negotiator.models.local.prepare import models_dir, prepare  # noqa: E402
from negotiator.runtime.log import read_episodes  # noqa: E402

SPEC = "local/gemma-3-270m"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def local_round(model, prompts, max_tokens: int) -> tuple[int, int, float]:
    t0 = time.perf_counter()
    responses = await asyncio.gather(
        *(model.complete(ModelRequest(messages=m, response_schema=s, max_tokens=max_tokens)) for m, s in prompts)
    )
    return (
        sum(r.completion_tokens for r in responses),
        sum(r.prompt_tokens for r in responses),
        time.perf_counter() - t0,
    )


def throughput(concurrency: int, rounds: int, max_tokens: int) -> dict:
    import torch

    from negotiator.models.local.decoding import Decoder, Request, chat_text, sampling_defaults
    from negotiator.models.local.engine import load_model

    prompts = first_seller_turns(concurrency)
    folder = models_dir() / "gemma-3-270m"
    model, tok, _ = load_model(folder)  # in the dtype the server picks on this CPU
    tok.padding_side = "left"
    texts = [chat_text(tok, m) for m, _ in prompts]
    batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)

    with local_servers([SPEC]):
        seller = local_model(SPEC)
        asyncio.run(local_round(seller, prompts, max_tokens))  # warm-up: grammars compiled, batch size learned
        local_tokens = local_s = 0.0
        prompt_tokens = 0
        for _ in range(rounds):
            n, p, s = asyncio.run(local_round(seller, prompts, max_tokens))
            local_tokens, local_s, prompt_tokens = local_tokens + n, local_s + s, prompt_tokens + p
    per_row = max(1, round(local_tokens / (rounds * concurrency)))

    with torch.inference_mode():
        model.generate(**batch, max_new_tokens=4, do_sample=False)  # warm-up
        t0 = time.perf_counter()
        for _ in range(rounds):
            out = model.generate(**batch, max_new_tokens=per_row, min_new_tokens=per_row, do_sample=False)
        raw_s = time.perf_counter() - t0
    raw_tokens = rounds * concurrency * (out.shape[1] - batch["input_ids"].shape[1])

    engine = Decoder(model, tok)  # in-process: grammar + per-row sampling, no HTTP, no batching window
    sampling = sampling_defaults(folder)  # what the server uses when a request names none
    reqs = lambda: [Request(engine.prompt_ids(m), max_tokens, sampling, engine.grammar(s)) for m, s in prompts]  # noqa: E731
    engine.generate(reqs())  # warm-up
    t0 = time.perf_counter()
    engine_tokens = sum(sum(r.completion_tokens for r in engine.generate(reqs())) for _ in range(rounds))
    engine_s = time.perf_counter() - t0

    return {
        "dtype": str(model.dtype).removeprefix("torch."),
        "concurrency": concurrency,
        "rounds": rounds,
        "prompt_tokens_per_request": round(prompt_tokens / (rounds * concurrency)),
        "completion_tokens_per_request": per_row,
        "local_path_tokens_per_s": round(local_tokens / local_s, 1),
        "engine_tokens_per_s": round(engine_tokens / engine_s, 1),
        "raw_generate_tokens_per_s": round(raw_tokens / raw_s, 1),
        "ratio_local_over_raw": round((local_tokens / local_s) / (raw_tokens / raw_s), 3),
    }


def vs_transformers_serve(concurrency: int, rounds: int, max_tokens: int) -> dict:
    """The same prompts through ``transformers serve --continuous-batching`` (no structured outputs:
    it refuses ``response_format``), via LiteLLM like the local path: tokens/s and valid answers."""
    import socket
    import urllib.request

    from negotiator.actions import ActionParseError, parse_text_action
    from negotiator.models.litellm_model import LiteLLMModel

    prompts = first_seller_turns(concurrency)
    from evals.suites import get_suite

    spaces = [get_suite("quick").scenarios()[i % 6].space for i in range(concurrency)]
    folder = models_dir() / "gemma-3-270m"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["transformers", "serve", str(folder), "--continuous-batching", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 300
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    return {"error": "transformers serve did not start"}
                time.sleep(1)
        model = LiteLLMModel(
            f"hosted_vllm/{folder}", base_url=f"http://127.0.0.1:{port}/v1", timeout=600, response_schema=False
        )
        reqs = [ModelRequest(messages=m, max_tokens=max_tokens) for m, _ in prompts]
        asyncio.run(_gather(model, reqs[:2]))  # warm-up: transformers serve loads the model on first use
        tokens, valid, seconds = 0, 0, 0.0
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = asyncio.run(_gather(model, reqs))
            seconds += time.perf_counter() - t0
            tokens += sum(r.completion_tokens for r in out)
            for r, space in zip(out, spaces, strict=False):
                try:
                    parse_text_action(r.text or "", space)
                    valid += 1
                except ActionParseError:
                    pass
        return {
            "tokens_per_s": round(tokens / seconds, 1),
            "valid_share": round(valid / (rounds * concurrency), 3),
            "completion_tokens_per_request": round(tokens / (rounds * concurrency)),
        }
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _gather(model, reqs):
    return await asyncio.gather(*(model.complete(r) for r in reqs))


def eval_quick(seller: str, concurrency: int) -> dict:
    """``negotiator eval`` on the quick suite in a subprocess, as a user runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [
            sys.executable,
            "-m",
            "negotiator",
            "eval",
            "--seller",
            seller,
            "--suite",
            "quick",
            "--concurrency",
            str(concurrency),
            "--quiet",
            "--out",
            str(out),
        ]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        episodes = read_episodes(out / "episodes.jsonl")
    turns = [t for e in episodes for t in e.turns if t.party == "seller"]
    answers = sum(t.usage.model_calls for t in turns)
    invalid = sum(len(t.invalid_attempts) for t in turns)
    scores = [e.metrics.seller_score for e in episodes if e.outcome.ended_by != "error"]
    return {
        "seller": seller,
        "negotiations": len(episodes),
        "errors": sum(e.outcome.ended_by == "error" for e in episodes),
        "wall_s": round(wall, 1),
        "seller_turns": len(turns),
        "prompt_tokens": sum(t.usage.prompt_tokens for t in turns),
        "completion_tokens": sum(t.usage.completion_tokens for t in turns),
        "first_attempt_valid_rate": round(sum(not t.invalid_attempts for t in turns) / max(1, len(turns)), 4),
        "fallback_share": round(sum(t.fallback for t in turns) / max(1, len(turns)), 4),
        "invalid_answer_share": round(invalid / max(1, answers), 4),
        "deal_rate": round(sum(e.outcome.deal for e in episodes) / max(1, len(episodes)), 3),
        "mean_seller_score": round(sum(scores) / max(1, len(scores)), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=8, help="requests in flight (the eval's default is 8)")
    ap.add_argument("--rounds", type=int, default=3, help="measured rounds of --concurrency requests")
    ap.add_argument("--max-tokens", type=int, default=256, help="max_tokens per request (the seller's default)")
    ap.add_argument("--unconstrained", action="store_true", help="also run the quick eval with ?grammar=off")
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument(
        "--vs-transformers-serve", action="store_true", help="also time `transformers serve --continuous-batching`"
    )
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args()

    started = time.strftime("%Y-%m-%d %H:%M")
    load_before = load()
    prepare("gemma-3-270m")
    report: dict = {"date": started, "cpus": os.cpu_count(), "load_before": load_before}
    report["throughput"] = throughput(a.concurrency, a.rounds, a.max_tokens)
    t = report["throughput"]
    print(
        f"throughput at {a.concurrency} in flight, {t['dtype']} ({t['prompt_tokens_per_request']} prompt tokens, "
        f"{t['completion_tokens_per_request']} new tokens per request):"
    )
    print(f"  local seller path (LiteLLM -> server)  {t['local_path_tokens_per_s']:8.1f} tokens/s")
    print(f"  engine in-process (grammar, no HTTP)   {t['engine_tokens_per_s']:8.1f} tokens/s")
    print(f"  raw batched model.generate             {t['raw_generate_tokens_per_s']:8.1f} tokens/s")
    print(f"  ratio local / raw                      {t['ratio_local_over_raw']:8.3f}   (goal >= 0.8)")
    if a.vs_transformers_serve:
        report["transformers_serve"] = ts = vs_transformers_serve(a.concurrency, a.rounds, a.max_tokens)
        if "error" in ts:
            print(f"  transformers serve: {ts['error']}")
        else:
            print(
                f"  transformers serve --continuous-batching {ts['tokens_per_s']:8.1f} tokens/s "
                f"({ts['completion_tokens_per_request']} tokens per answer, no structured outputs: "
                f"{ts['valid_share']:.0%} of its answers are valid actions)"
            )
    if not a.skip_eval:
        runs = [eval_quick(SPEC, a.concurrency)]
        if a.unconstrained:
            runs.append(eval_quick(SPEC + "?grammar=off", a.concurrency))
        report["eval_quick"] = runs
        for e in runs:
            print(
                f"negotiator eval --seller {e['seller']} (quick, {e['negotiations']} negotiations, {e['errors']} errors):"
            )
            print(
                f"  wall time {e['wall_s']} s; seller turns {e['seller_turns']}; tokens {e['prompt_tokens']} prompt + "
                f"{e['completion_tokens']} completion"
            )
            print(
                f"  first-attempt valid {e['first_attempt_valid_rate']:.1%} (goal >= 95%); turns ending on a fallback "
                f"{e['fallback_share']:.1%}; invalid answers {e['invalid_answer_share']:.1%}"
            )
            print(f"  deal rate {e['deal_rate']:.2f}; mean seller score {e['mean_seller_score']:.3f}")
    report["load_after"] = load()
    print(f"load average (1, 5, 15 min) before: {load_before}; after: {report['load_after']}; {os.cpu_count()} CPUs")
    if a.json:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
