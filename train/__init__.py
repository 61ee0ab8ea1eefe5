"""GRPO training of negotiating sellers (TRL + peft) on whole negotiations.

::

    from train import resolve, train
    manifest = train(resolve("cpu", out="runs/seller", lr=3e-5, steps=40))

The same as ``negotiator train --out runs/seller --lr 3e-5 --steps 40``. See
docs/training.md for how a step works and what a run writes.
"""

from .config import PROFILES, TrainConfig, resolve
from .pool import DEFAULT_TACTICS, TRAIN_PERSONAS, BuyerPool


def train(config: TrainConfig, **kwargs) -> dict:
    """Train one arm and return its manifest (imports torch, transformers and TRL on first use)."""
    from .run import train as _train

    return _train(config, **kwargs)


__all__ = ["PROFILES", "TrainConfig", "resolve", "train", "BuyerPool", "DEFAULT_TACTICS", "TRAIN_PERSONAS"]
