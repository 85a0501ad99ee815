"""Indexing and expanding a ``Bounded`` with per-element bounds takes views, not copies.

Issue 23: ``spec[0]`` on a 3x457x120 frame spec copied and re-validated every bound (about
27 ms; an env calling it per step ran at 0.78 s/step). These tests pin the cause down without
timing: the derived spec's bounds share the parent's storage, so no element is copied or read.
"""

import torch

from hub.specs import Bounded, Composite

SHAPE = (3, 457, 120)


def _frame_spec() -> Bounded:
    gen = torch.Generator().manual_seed(0)
    return Bounded(-torch.rand(SHAPE, generator=gen), torch.rand(SHAPE, generator=gen) + 0.5)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def test_index_shares_the_bounds():
    spec = _frame_spec()
    for sub in (spec[0], spec[1:], spec[0, 5:9]):
        assert _same_storage(sub.low, spec.low) and _same_storage(sub.high, spec.high)
    assert torch.equal(spec[1].low, spec.low[1]) and torch.equal(spec[1].high, spec.high[1])


def test_expand_allocates_no_bounds():
    spec = _frame_spec()
    big = spec.expand(8, *SHAPE)
    assert big.shape == torch.Size((8, *SHAPE))
    assert big.low.stride()[0] == 0 and _same_storage(big.low, spec.low)
    assert big.is_in(big.rand()) and spec[2].is_in(spec[2].rand())


def test_clone_still_copies():
    spec = _frame_spec()
    copy = spec.clone()
    assert not _same_storage(copy.low, spec.low) and copy == spec


def test_derived_specs_keep_their_semantics():
    spec = _frame_spec()
    sub = spec[0]
    value = sub.rand((4,))
    assert sub.is_in(value) and sub.project(value + 10).le(sub.high).all()
    assert not sub.is_in(sub.high + 1)
    assert sub == Bounded(spec.low[0].clone(), spec.high[0].clone())
    uniform = Bounded(0, 255, shape=SHAPE, dtype=torch.uint8)
    assert repr(uniform[0]) == "Bounded(shape=[457, 120], dtype=uint8, low=0, high=255)"
    picked = Bounded(torch.tensor([[0.0, 0.0], [1.0, 2.0]]), 5.0)[0]
    assert repr(picked) == "Bounded(shape=[2], dtype=float32, low=0.0, high=5.0)"
    frames = Composite(pixels=spec, shape=SHAPE[:1])
    assert _same_storage(frames[0]["pixels"].low, spec.low)
