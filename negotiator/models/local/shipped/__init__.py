"""Sellers shipped inside the package: LoRA adapters trained by ``negotiator train``, each in
its own folder here with the run's manifest, config and metrics, served on a prepared base.

``local/gemma-3-270m-seller`` evaluates one with no training. Each folder's adapter_config.json
names its base by the prepared model's name (``gemma-3-270m``): the adapter was trained on
that prepared copy (the GGUF dequantized), not on any other release of the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SHIPPED = Path(__file__).parent


@dataclass(frozen=True)
class ShippedSeller:
    base: str  # the prepared model it is served on
    description: str


SELLERS: dict[str, ShippedSeller] = {
    "gemma-3-270m-seller": ShippedSeller(
        "gemma-3-270m",
        "the CPU-trained pure 270M seller of docs/results.md (a LoRA on gemma-3-270m; it plays the pure policy "
        "it trained with unless ?strategy= says otherwise)",
    ),
    "gemma-3-270m-reader": ShippedSeller(
        "gemma-3-270m",
        "the embedded default seller: the 270M trained to read the buyer's words (a hurry, a competing quote) for "
        "the responsive strategy, which makes every move (menu=readings, docs/decisions.md)",
    ),
}


def local_folder(name: str) -> Path:
    """The folder a ``local/NAME`` spec names: a shipped seller's, else the path as written."""
    return SHIPPED / name if name in SELLERS else Path(name).expanduser()
