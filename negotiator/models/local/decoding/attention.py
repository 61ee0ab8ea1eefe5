"""Batch-invariant forward passes: a row's logits do not depend on what else is in its batch.

A batched forward normally differs from the same row alone in the last bits: left padding
and the other rows change the shapes the kernels see (how a softmax or a matrix product
splits its sums), and a last-bit change in a logit can flip a sampled token. So a seeded
request would still write different answers at different concurrencies. Two changes make
the decoder's passes invariant (``tests/test_decoding.py`` checks it token for token):

* **Attention per row, over the row's own tokens.** The decoder keeps each request's keys
  and values contiguous and unpadded (:class:`RowKV`, per layer) and attends each row
  separately over exactly those, with a mask built from its own positions (causal, and
  the sliding window of Gemma's local layers). Alone or among fifteen others, a row's
  attention runs on the same tensors. Padding never enters a row's cache.
* **Matrix products at row counts that do not change a row's result.** The linear layers
  see every new token of the pass at once, the rows' tokens packed one after another in a
  single sequence (no padding between rows: a row decoding one token does not pay for
  another row's jump-forward chunk or longer prompt). bf16 products on this CPU give each
  token the same result at any row count; MKL's fp32 products do not for a few small counts
  (1, 2, 3, 5-7, 9-11 here). :func:`invariant_counts` finds them once per dtype, and the
  decoder adds empty slots to a pass (and kept logits) that would hit one.

Training's loss and every other forward of the model are untouched: the model uses this
attention only inside :func:`row_attention`.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

NAME = "negotiator_rows"


@dataclass
class RowKV:
    """Each request's keys and values, per layer: contiguous, unpadded, preallocated."""

    capacity: dict[int, int] = field(default_factory=dict)  # request -> tokens it may hold
    length: dict[int, int] = field(default_factory=dict)  # request -> tokens stored
    keys: dict[tuple[int, int], torch.Tensor] = field(
        default_factory=dict
    )  # (layer, request) -> (kv heads, capacity, dim)
    values: dict[tuple[int, int], torch.Tensor] = field(default_factory=dict)

    def drop(self, request: int) -> None:
        for store in (self.keys, self.values):
            for key in [k for k in store if k[1] == request]:
                del store[key]


@dataclass
class Pass:
    """One forward pass over one packed sequence: which request each run of its tokens holds.

    ``rows[r]`` is (request, first slot, new tokens): the request's new tokens sit at slots
    ``first .. first + new - 1`` of the sequence; slots after the last row are empty."""

    kv: RowKV
    rows: list[tuple[int, int, int]]
    _masks: dict = field(default_factory=dict)

    def commit(self) -> None:
        for request, _, n in self.rows:
            self.kv.length[request] = self.kv.length.get(request, 0) + n

    def mask(self, past: int, n: int, lo: int, window: int | None, device=None) -> torch.Tensor:
        """Which keys (positions lo..past+n-1) each of ``n`` queries (positions past..) may see."""
        key = (past, n, lo, window, device)
        m = self._masks.get(key)
        if m is None:
            q = torch.arange(past, past + n, device=device)[:, None]
            k = torch.arange(lo, past + n, device=device)[None, :]
            m = k <= q
            if window is not None:
                m &= q - k < window
            self._masks[key] = m
        return m


def _attention(
    module,
    query,
    key,
    value,
    attention_mask,
    *,
    scaling=None,
    dropout=0.0,
    sliding_window=None,
    negotiator_pass: Pass | None = None,
    **kwargs,
):
    """The attention function the model calls inside :func:`row_attention`."""
    p = negotiator_pass
    if p is None:  # a forward that is not the decoder's: the usual attention
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs
        )
    _, heads, q_len, dim = query.shape
    out = query.new_zeros(1, q_len, heads, dim)
    layer = module.layer_idx
    for request, start, n in p.rows:
        ks, vs = p.kv.keys.get((layer, request)), p.kv.values.get((layer, request))
        if ks is None or vs is None:
            shape = (key.shape[1], p.kv.capacity[request], key.shape[3])
            ks = p.kv.keys[(layer, request)] = key.new_empty(shape)
            vs = p.kv.values[(layer, request)] = value.new_empty(shape)
        past = p.kv.length.get(request, 0)
        ks[:, past : past + n] = key[0, :, start : start + n]
        vs[:, past : past + n] = value[0, :, start : start + n]
        lo = 0 if sliding_window is None else max(0, past - sliding_window + 1)  # the first key any query may see
        q = query[:, :, start : start + n]
        k, v = ks[None, :, lo : past + n], vs[None, :, lo : past + n]
        if n == 1:  # decoding one token: every kept key is visible
            o = F.scaled_dot_product_attention(q, k, v, scale=scaling, enable_gqa=True)
        elif past == 0 and (sliding_window is None or n <= sliding_window):  # a prompt inside the window
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scaling, enable_gqa=True)
        else:
            o = F.scaled_dot_product_attention(
                q, k, v, attn_mask=p.mask(past, n, lo, sliding_window, q.device), scale=scaling, enable_gqa=True
            )
        out[0, start : start + n] = o[0].transpose(0, 1)
    return out, None


@functools.cache
def _register() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, _attention)


@contextmanager
def row_attention(model):
    """The model attends with :func:`_attention` inside this block (forward passes given a
    ``negotiator_pass``), and as before after it."""
    _register()
    before = model.config._attn_implementation
    model.set_attn_implementation(NAME)
    try:
        yield
    finally:
        model.set_attn_implementation(before)


@functools.cache
def invariant_counts(dtype: torch.dtype, limit: int = 32) -> frozenset[int]:
    """Row counts (1..limit) at which a matrix product gives every row what it gives that row
    in a large batch, on this machine's BLAS for ``dtype``; above ``limit`` all counts are
    taken to be (true of MKL and oneDNN here up to 2,048 rows and every layer shape tried)."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(256, 256, generator=g).to(dtype)
    x = torch.randn(4 * limit, 256, generator=g).to(dtype)
    full = F.linear(x, w)
    return frozenset(m for m in range(1, limit + 1) if torch.equal(F.linear(x[:m], w), full[:m]))


def invariant_count(n: int, dtype: torch.dtype) -> int:
    """The least count >= ``n`` at which a matrix product gives each row its large-batch result."""
    ok = invariant_counts(dtype)
    limit = max(ok, default=0)
    while not (n > limit or n in ok):
        n += 1
    return n
