"""Model families: which lab's lineage a model comes from.

A buyer from the same family as the training buyer pool inflates a trained seller's
measured gain (the paper's finding), so evaluation reports and warns by family.
"""

from __future__ import annotations

_FAMILIES = [
    ("gemma", "gemma"),
    ("gemini", "gemini"),
    ("claude", "claude"),
    ("anthropic/", "claude"),
    ("gpt", "gpt"),
    ("openai/o", "gpt"),
    ("llama", "llama"),
    ("qwen", "qwen"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
]


def model_family(spec: str) -> str:
    """Family of a party spec: ``rule``, ``scripted``, ``human`` or the model lineage."""
    s = spec.lower()
    for prefix in ("rule", "scripted", "human"):
        if s.startswith(prefix + "/") or s == prefix:
            return prefix
    name = s.split("?")[0]
    for needle, family in _FAMILIES:
        if needle in name:
            return family
    return name.split("/")[-1].split("-")[0] or "unknown"
