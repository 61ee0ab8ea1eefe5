"""A tiny randomly initialised Gemma 3 with a small byte-level tokenizer.

It has the real architecture, chat template and file layout of a prepared model, builds
in about a second and generates quickly, so tests exercise the whole local path (folder,
server, batching, grammar, LoRA adapters) without the 50 s conversion of the real one.
Unconstrained it writes gibberish; under a JSON-schema grammar it writes valid actions.
"""

from __future__ import annotations

from pathlib import Path

TINY_VERSION = 1

_CORPUS = [
    '{"action": "make_offer", "message": "Here is my offer.", "terms": {"price": 1200, "warranty_months": 12}}',
    '{"action": "accept", "message": "Deal."}',
    '{"action": "walk_away", "message": "No, thanks."}',
    "You are the seller. The buyer offered terms worth 0.42 to you. Round 2 of 5; this is your move.",
    "price delivery_days payment_terms upfront net30 net60 warranty quantity seats support none case",
    "0123456789 .,:;!?-_'\"{}[]() abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ",
]

_SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from .chat_template import GEMMA_CHAT_TEMPLATE

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="<unk>",
        additional_special_tokens=["<start_of_turn>", "<end_of_turn>"],
    )
    fast.chat_template = GEMMA_CHAT_TEMPLATE
    return fast


def build_tiny_gemma(folder: str | Path, seed: int = 0) -> Path:
    """Write a tiny random Gemma 3 (tokenizer, config, weights) into ``folder``."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from .decoding import set_turn_stops

    folder = Path(folder)
    tok = _tokenizer()
    config = Gemma3TextConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=8192,
        sliding_window=128,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(config)  # float32: bf16 kernels are slow at this size on CPU
    set_turn_stops(model, tok)
    model.save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder
