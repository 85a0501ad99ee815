"""Categorical, OneHot, MultiCategorical, MultiOneHot and Binary: conversions and edge cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from specs_strategies import batch_shapes, seeded

from hub.specs import Binary, Categorical, MultiCategorical, MultiOneHot, OneHot

SETTINGS = settings(max_examples=25, deadline=None)


@SETTINGS
@given(n=st.integers(1, 6), batch=batch_shapes(), _=seeded())
def test_categorical_one_hot_round_trip(n, batch, _):
    cat = Categorical(n, shape=batch)
    hot = cat.to_one_hot_spec()
    assert hot == OneHot(n, shape=(*batch, n))
    assert hot.to_categorical_spec() == cat
    value = cat.rand()
    encoded = cat.to_one_hot(value)
    assert hot.is_in(encoded)
    assert torch.equal(hot.to_categorical(encoded), value)
    sample = hot.rand()
    assert torch.equal(cat.to_one_hot(hot.to_categorical(sample)), sample)


@SETTINGS
@given(n=st.integers(2, 6), batch=batch_shapes(), _=seeded())
def test_one_hot_encodes_indices(n, batch, _):
    spec = OneHot(n, shape=(*batch, n))
    index = torch.randint(0, n, batch)
    assert torch.equal(spec.encode(index.numpy()), spec.to_categorical_spec().to_one_hot(index))
    if not batch:
        assert torch.equal(spec.encode(int(index)), spec.encode(np.int64(index)))


@SETTINGS
@given(nvec=st.lists(st.integers(1, 5), min_size=1, max_size=4), batch=batch_shapes(), _=seeded())
def test_multi_round_trip(nvec, batch, _):
    cat = MultiCategorical(nvec, shape=(*batch, len(nvec)))
    hot = cat.to_one_hot_spec()
    assert hot == MultiOneHot(nvec, shape=(*batch, sum(nvec)))
    assert hot.to_categorical_spec() == cat
    value = cat.rand()
    assert torch.equal(hot.to_categorical(cat.to_one_hot(value)), value)
    sample = hot.rand()
    assert torch.equal(cat.to_one_hot(hot.to_categorical(sample)), sample)
    if len(nvec) != sum(nvec):
        assert torch.equal(hot.encode(value.numpy()), cat.to_one_hot(value))


def test_categorical_bool_is_the_done_spec():
    done = Categorical(2, shape=(1,), dtype=torch.bool)
    assert done.zero().dtype == torch.bool and done.zero().shape == (1,)
    assert done.is_in(torch.tensor([True]))
    assert not done.is_in(torch.tensor([1]))
    assert done.encode(True).dtype == torch.bool
    assert torch.equal(done.project(torch.tensor([0.9])), torch.tensor([True]))
    with pytest.raises(ValueError, match="needs n=2"):
        Categorical(3, dtype=torch.bool)


def test_categorical_bounds_and_errors():
    spec = Categorical(3)
    assert spec.n == 3 and spec.shape == () and spec.dtype == torch.int64
    assert not spec.is_in(torch.tensor(-1)) and not spec.is_in(torch.tensor(3))
    assert torch.equal(spec.project(torch.tensor([-4.0, 1.4, 9.0])), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="positive int"):
        Categorical(0)
    with pytest.raises(ValueError, match="use Bounded"):
        Categorical(3, dtype=torch.float32)


def test_one_hot_values():
    spec = OneHot(3)
    assert spec.is_in(torch.tensor([False, True, False]))
    assert not spec.is_in(torch.tensor([True, True, False]))
    assert not spec.is_in(torch.zeros(3, dtype=torch.bool))
    as_int = OneHot(3, dtype=torch.int64)
    assert not as_int.is_in(torch.tensor([2, -1, 0]))
    assert torch.equal(spec.project(torch.tensor([0.1, 0.7, 0.2])), torch.tensor([0, 1, 0]).bool())
    with pytest.raises(ValueError, match="last dim is n"):
        OneHot(3, shape=(4,))
    with pytest.raises(IndexError):
        spec[0]  # the last dim is the one-hot dim, not a batch dim
    with pytest.raises(ValueError, match="not a batch dim"):
        spec.unsqueeze(-1)


def test_multi_specs_values_and_errors():
    spec = MultiCategorical([2, 3])
    assert spec.is_in(torch.tensor([1, 2]))
    assert not spec.is_in(torch.tensor([2, 0]))
    assert torch.equal(spec.project(torch.tensor([5, -3])), torch.tensor([1, 0]))
    hot = MultiOneHot([2, 3])
    assert hot.is_in(torch.tensor([0, 1, 0, 0, 1]).bool())
    assert not hot.is_in(torch.tensor([1, 1, 0, 0, 1]).bool())
    assert not hot.is_in(torch.tensor([0, 1, 0, 0, 0]).bool())
    assert hot.is_in(hot.project(torch.randn(4, 5)))
    with pytest.raises(ValueError, match="len\\(nvec\\)"):
        MultiCategorical([2, 3], shape=(3,))
    with pytest.raises(ValueError, match="sum\\(nvec\\)"):
        MultiOneHot([2, 3], shape=(4,))
    with pytest.raises(ValueError, match="positive int"):
        MultiCategorical([2, 0])
    # a tensor nvec with equal rows (TorchRL style) is accepted
    assert MultiCategorical(torch.tensor([[2, 3], [2, 3]]), shape=(2, 2)).nvec.tolist() == [2, 3]


def test_binary():
    spec = Binary(3)
    assert spec.shape == (3,) and spec.n == 3 and spec.dtype == torch.int8
    assert Binary(shape=(2, 4)).n == 4
    assert not spec.is_in(torch.tensor([0, 2, 1], dtype=torch.int8))
    assert torch.equal(
        spec.project(torch.tensor([0.2, 0.8, -3.0])), torch.tensor([0, 1, 0], dtype=torch.int8)
    )
    flags = Binary(2, dtype=torch.bool)
    assert flags.is_in(flags.rand((4,)))
    with pytest.raises(ValueError, match="n .the number of flags. or a shape"):
        Binary()
    with pytest.raises(ValueError, match="last dim is n"):
        Binary(2, shape=(3,))
