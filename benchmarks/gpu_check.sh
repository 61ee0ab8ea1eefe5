#!/usr/bin/env bash
# A prepared GPU check: the local decoder and a few GRPO steps on CUDA, each timed, PASS/FAIL/SKIP.
#
#   bash benchmarks/gpu_check.sh              # on a CUDA host: four stages, under 8 minutes on an H200
#   bash benchmarks/gpu_check.sh --dry-run    # on the CPU: the tiny model only (tests/test_gpu_check.py)
#
# Python packages the host lacks (trl, xgrammar, pydantic ... on a bare GPU image) travel as
# wheels in .whl/ (benchmarks/gpu_wheels.sh fetches them; GPU_CHECK_WHEELS names another
# folder); they are installed from there, offline, into a folder of their own. Exit status: 1
# when a stage failed, 3 when every stage was skipped (no CUDA, missing packages), 2 for a bad
# argument, else 0.
set -u
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || PY=python
WHEELS="${GPU_CHECK_WHEELS:-.whl}"  # the folder gpu_wheels.sh fills
if [[ " $* " != *" --dry-run "* ]] && compgen -G "$WHEELS/*.whl" >/dev/null; then  # the host's wheels, not the dry run's
  site="${TMPDIR:-/tmp}/gpu-check-site"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$WHEELS"/*.whl \
    || { echo "gpu_check: could not install the wheels in $WHEELS/ (see pip's message above)"; exit 2; }
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's negotiator and train, installed or not
export PYTHONUNBUFFERED=1 TRL_EXPERIMENTAL_SILENCE=1 TOKENIZERS_PARALLELISM=false
exec "$PY" benchmarks/gpu_check.py "$@"
