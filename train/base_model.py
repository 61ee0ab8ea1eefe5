"""The model GRPO starts from, and the tokenizer it speaks.

``--base`` names it like a seller spec:

* ``local/gemma-3-270m`` (the default): the embedded Gemma 3 270M, prepared once by the
  local model code (``negotiator models prepare gemma-3-270m``) and cached;
* ``local/tiny-random-gemma``: a tiny random Gemma 3 for tests;
* ``local/PATH`` or ``PATH``: a transformers model folder, or the output folder of an
  earlier ``negotiator train`` run (its ``merged/`` model is loaded);
* anything else: a Hugging Face model id (GPU hosts with a model hub).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from negotiator.errors import UsageError

EMBEDDED_BASE = "local/gemma-3-270m"


@dataclass
class Base:
    """A loaded base model: what to train, how to tokenize it, and what to record."""

    model: object  # transformers PreTrainedModel
    tokenizer: object  # transformers PreTrainedTokenizerBase
    spec: str  # as the user named it
    path: str  # folder (or hub id) it was loaded from


def resolve_base_path(spec: str, say=None) -> str:
    """Folder or hub id for ``spec``; prepares an embedded model on first use."""
    from negotiator.models.local.prepare import RECIPES, prepare

    s = spec.strip()
    name = s[len("local/") :] if s.startswith("local/") else s
    if name in RECIPES:
        return str(prepare(name, say=say))
    p = Path(name).expanduser()
    if (p / "merged" / "config.json").is_file():  # the output folder of a training run
        return str(p / "merged")
    if (p / "config.json").is_file():
        return str(p)
    if s.startswith("local/") or p.exists() or name.startswith((".", "/", "~")):
        raise UsageError(
            f"--base {spec}: {p} is not a transformers model folder (no config.json). Give a folder written by "
            f"save_pretrained, the output folder of a training run, or one of: {', '.join('local/' + r for r in RECIPES)}"
        )
    return s  # a model hub id, e.g. google/gemma-3-1b-it on a GPU host


def load_base(spec: str = EMBEDDED_BASE, *, dtype: str = "bfloat16", say=None) -> Base:
    """Load the base model and tokenizer for ``spec`` (in ``dtype``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from negotiator.models.local.decoding import set_turn_stops

    path = resolve_base_path(spec, say)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
    except OSError as e:
        raise UsageError(
            f"--base {spec}: could not load {path} ({e}). Check the name, or pass a local folder."
        ) from None
    if not getattr(tokenizer, "chat_template", None):
        raise UsageError(
            f"--base {spec}: the tokenizer in {path} has no chat template; the seller's prompt is a chat. "
            "Add one to its tokenizer_config.json (Gemma models: Gemma's turn template)."
        )
    tokenizer.padding_side = "left"
    set_turn_stops(model, tokenizer)  # generation of one turn stops where the local decoder's does
    return Base(model=model, tokenizer=tokenizer, spec=spec, path=path)
