"""Stop tokens, chat templating and padding: how a chat becomes token ids and where a turn ends."""

from __future__ import annotations

END_OF_TURN = "<end_of_turn>"


def end_of_turn_id(tokenizer) -> int | None:
    """The token that closes a chat turn: <end_of_turn> where the vocabulary has it, else EOS."""
    eot = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    if isinstance(eot, int) and eot != tokenizer.unk_token_id:
        return eot
    return tokenizer.eos_token_id


def stop_ids(model, tokenizer) -> list[int]:
    """Where generation of one chat turn stops: the model's EOS ids, the tokenizer's EOS and
    the end of a turn (a Gemma model ends its turn with <end_of_turn>, and sometimes <eos>)."""
    eos = model.generation_config.eos_token_id
    ids = [eos] if isinstance(eos, int) else list(eos or [])
    for t in (tokenizer.eos_token_id, end_of_turn_id(tokenizer)):
        if t is not None and t not in ids:
            ids.append(t)
    return ids


def set_turn_stops(model, tokenizer) -> None:
    """Write :func:`stop_ids` (and the pad token) into the model's generation config, so that
    the saved folder, vLLM and ``model.generate`` stop where the decoder does."""
    gc = model.generation_config
    gc.eos_token_id = stop_ids(model, tokenizer)
    if gc.pad_token_id is None:
        gc.pad_token_id = tokenizer.pad_token_id


def chat_text(tokenizer, messages: list[dict]) -> str:
    """A chat as the model reads it, ending with the prompt of the model's turn.
    ValueError when there is no chat template or it refuses the messages."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this model folder has no chat template; add one to its tokenizer_config.json")
    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except Exception as e:  # jinja raise_exception: roles that do not alternate, tool roles ...
        raise ValueError(f"the chat template refused these messages: {e}") from None


def text_ids(tokenizer, text: str) -> list[int]:
    """Token ids of rendered text (the chat template already wrote the special tokens)."""
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def chat_ids(tokenizer, messages: list[dict]) -> list[int]:
    return text_ids(tokenizer, chat_text(tokenizer, messages))


def left_pad(rows: list[list[int]], pad_id: int):
    """(ids, attention mask) of ``rows`` left-padded to one width: every row's next token is at the end."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r) :] = torch.tensor(r)
            mask[i, width - len(r) :] = 1
    return ids, mask
