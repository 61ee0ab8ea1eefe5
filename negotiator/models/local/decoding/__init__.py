"""Decoding the local model: the one implementation the server and training rollouts share.

What the deployed seller is served and what GRPO trains on are decoded by the same code,
with the same defaults:

* :class:`Engine`, the interface every generation backend offers (``grammar(schema)``,
  ``generate(requests)``): the local :class:`Decoder` (the server's worker and training
  rollouts call it) and vLLM for training on GPUs (``train/vllm_engine.py``);
* :class:`Request`, :class:`Sampling` (temperature, top-k, top-p, seed; the model
  folder's ``generation_config.json`` gives the defaults) and :class:`Decoded`;
* the stop tokens of a chat turn, the chat template, the padding.

A seeded request draws the same tokens whatever else shares its batch: the decoder's
forward passes are batch-invariant (see :mod:`.attention`), so an evaluation gives the
same episodes at any concurrency and two arms meet the same random numbers.
"""

from .interface import JSON_OBJECT, Decoded, Engine, Request, Sampling, sampling_defaults
from .tokens import END_OF_TURN, chat_ids, chat_text, end_of_turn_id, left_pad, set_turn_stops, stop_ids, text_ids

__all__ = [
    "Decoded",
    "Decoder",
    "Engine",
    "JSON_OBJECT",
    "Request",
    "Sampling",
    "sampling_defaults",
    "END_OF_TURN",
    "chat_ids",
    "chat_text",
    "end_of_turn_id",
    "left_pad",
    "set_turn_stops",
    "stop_ids",
    "text_ids",
]


def __getattr__(name: str):
    if name == "Decoder":  # torch and xgrammar load only when a decoder is built
        from .decoder import Decoder

        return Decoder
    raise AttributeError(name)
