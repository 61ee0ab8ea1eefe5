#!/usr/bin/env bash
# Wheels for benchmarks/gpu_check.sh on a GPU host whose image has torch, transformers, peft
# and accelerate but not the rest of what `negotiator train` imports (pydantic, xgrammar, trl,
# datasets, LangGraph ...), and no network. Run here (where pip reaches PyPI), in the
# repository's root (.gitignore keeps .whl/ out of git); carry .whl/ to the host (the device
# tool: carry [".whl"]): gpu_check.sh installs from it, offline.
#
#   bash benchmarks/gpu_wheels.sh [PYTHON]    # PYTHON: the interpreter whose versions to pin (default: python)
#
# Each package is pinned to the version installed beside PYTHON (the versions this checkout
# is tested with), fetched for CPython 3.12 on x86-64 Linux (the H200 host's Python), without
# dependencies: the list below is what the check's imports need that the host image lacks.
set -eu
cd "$(dirname "$0")/.."
PY="${1:-python}"
NAMES="pydantic pydantic-core typing-inspection annotated-types typing-extensions
xgrammar apache-tvm-ffi
trl datasets dill multiprocess
langgraph langgraph-checkpoint langgraph-prebuilt langgraph-sdk langchain-core langchain-protocol
langsmith jsonpatch jsonpointer uuid-utils orjson ormsgpack tenacity zstandard requests-toolbelt
sniffio distro websockets httpx2 httpcore2 truststore
opentelemetry-api opentelemetry-sdk opentelemetry-semantic-conventions text2num"
mkdir -p .whl
pins=$("$PY" - $NAMES <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
missing = []
for name in sys.argv[1:]:
    try:
        print(f"{name}=={version(name)}")
    except PackageNotFoundError:
        missing.append(name)
if missing:
    sys.exit(f"gpu_wheels: not installed beside this Python: {', '.join(missing)} (pip install -e '.[dev]' first)")
PY
)
platforms=""
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms="$platforms --platform $p"
done
# shellcheck disable=SC2086  # the lists are meant to split
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $platforms -d .whl $pins
du -ch .whl/*.whl | tail -1 | sed 's/total/in .whl\/ (a device call carries at most 64 MiB)/'
