"""Where the local decoder's time goes on CUDA: one 8-row generate, warm, under cProfile and torch's profiler.

    python benchmarks/gpu_decoder_profile.py          # on a CUDA host, wheels as for gpu_check.sh
    python benchmarks/gpu_decoder_profile.py --cpu    # the tiny model only, on the CPU

The models and prompts are benchmarks/gpu_check.py's (a tiny random Gemma 3, and a
Gemma-3-270M-shaped one with random weights, bf16 on CUDA; eight first seller turns of the
quick suite, grammar-constrained, up to 64 tokens). Each is warmed up on the whole batch twice,
then timed, then profiled: the slowest functions, the decoder's own parts, the kernel launches
and the top operators. docs/benchmarks.md records a run on an H200.
"""

import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import gpu_check as g  # noqa: E402
import torch  # noqa: E402


def main() -> None:
    cpu = "--cpu" in sys.argv
    check = g.Check(dry_run=cpu, work=Path(tempfile.mkdtemp()))
    sync = (lambda: None) if cpu else torch.cuda.synchronize
    folders = [("tiny", g.tiny_folder)] + ([] if cpu else [("270m", g.gemma_270m_folder)])
    for name, folder in folders:
        engine, requests = g.decoder_batch(check, folder, g.DECODER_ROWS, g.DECODER_TOKENS)
        engine.generate(requests())
        engine.generate(requests())  # warm: the batch's shapes seen, kernels chosen
        sync()
        t0 = time.perf_counter()
        out = engine.generate(requests())
        sync()
        wall = time.perf_counter() - t0
        n = sum(d.completion_tokens for d in out)
        print(f"== {name}: {n} tokens in {wall:.2f} s ({n / wall:.0f} tok/s), warm")
        prof = cProfile.Profile()
        prof.enable()
        engine.generate(requests())
        sync()
        prof.disable()
        for order, only in (("tottime", ()), ("cumulative", ("decoding/",))):
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats(order).print_stats(*only, 12)
            print("\n".join(line for line in text.getvalue().splitlines()[6:] if line.strip()))
        activities = [torch.profiler.ProfilerActivity.CPU] + ([] if cpu else [torch.profiler.ProfilerActivity.CUDA])
        with torch.profiler.profile(activities=activities) as tp:
            engine.generate(requests())
            sync()
        events = tp.key_averages()
        launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernelEx"))
        print(f"kernel launches: {launches}")
        print(events.table(sort_by="self_cpu_time_total", row_limit=10, max_name_column_width=40))


if __name__ == "__main__":
    main()
