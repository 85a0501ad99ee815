"""Unbounded, Bounded and NonTensor: defaults, bounds, sampling edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tensordict import NonTensorData, NonTensorStack

from hub.specs import Bounded, NonTensor, Unbounded


def test_unbounded_defaults_and_positional_shape():
    spec = Unbounded((1,), dtype=torch.float)
    assert spec.shape == (1,) and spec.dtype == torch.float32 and spec.device is None
    assert Unbounded(3).shape == (3,)
    assert Unbounded().shape == ()
    assert Unbounded(2, dtype=torch.int64).rand().dtype == torch.int64
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert Unbounded(2).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)


def test_unbounded_accepts_any_value():
    spec = Unbounded(2)
    assert spec.is_in(torch.tensor([math.inf, -1e30]))
    assert spec.project(torch.tensor([1, 2])).dtype == torch.float32
    assert torch.equal(
        Unbounded(2, dtype=torch.int32).project(torch.tensor([1.6, -2.4])),
        torch.tensor([2, -2], dtype=torch.int32),
    )


def test_bounded_low_high_broadcast():
    spec = Bounded(torch.tensor([-1.0, 0.0]), 1.0, shape=(3, 2))
    assert spec.low.shape == (3, 2) and spec.high.shape == (3, 2)
    assert torch.equal(spec.low[:, 0], torch.full((3,), -1.0))
    assert Bounded(torch.zeros(4), torch.ones(4)).shape == (4,)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        Bounded(torch.zeros(3), torch.ones(3), shape=(4,))
    with pytest.raises(ValueError, match="low <= high"):
        Bounded(1.0, 0.0, shape=(2,))


def test_bounded_integer_samples_integers_in_range():
    spec = Bounded(-2, 3, shape=(1000,), dtype=torch.int64)
    sample = spec.rand()
    assert sample.dtype == torch.int64
    assert sample.min() == -2 and sample.max() == 3  # both ends are reachable
    per_element = Bounded(torch.tensor([0, 10]), torch.tensor([1, 12]), dtype=torch.int32)
    values = per_element.rand((500,))
    assert per_element.is_in(values)
    assert set(values[:, 1].tolist()) == {10, 11, 12}
    full = Bounded(torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max, dtype=torch.int64)
    assert full.is_in(full.rand((10,)))
    uint8 = Bounded(0, 255, shape=(3,), dtype=torch.uint8)
    assert uint8.is_in(uint8.rand((10,)))


@pytest.mark.parametrize(
    "low, high",
    [
        (-math.inf, math.inf),
        (0.0, math.inf),
        (-math.inf, 5.0),
        (-3.0e38, 3.0e38),  # finite, but high - low overflows float32
        (torch.tensor([-math.inf, 0.0, -1.0]), torch.tensor([math.inf, math.inf, 1.0])),
    ],
)
def test_bounded_open_and_huge_bounds_sample_finite_values(low, high):
    spec = Bounded(low, high, shape=(3,))
    sample = spec.rand((200,))
    assert torch.isfinite(sample).all()
    assert spec.is_in(sample)


def test_bounded_is_in_and_project():
    spec = Bounded(-1.0, 1.0, shape=(2,))
    assert spec.is_in(torch.tensor([-1.0, 1.0]))
    assert not spec.is_in(torch.tensor([-1.0, 1.01]))
    assert not spec.is_in(torch.tensor([math.nan, 0.0]))
    assert spec.is_in(spec.project(torch.tensor([math.nan, 7.0])))
    ints = Bounded(0, 4, shape=(2,), dtype=torch.int64)
    assert torch.equal(ints.project(torch.tensor([-3.7, 9.2])), torch.tensor([0, 4]))
    per_element = Bounded(torch.tensor([0.0, -5.0]), torch.tensor([1.0, 5.0]))
    assert not per_element.is_in(torch.tensor([2.0, 2.0]))
    assert per_element.is_in(torch.tensor([1.0, 2.0]))


def test_bounded_equality_compares_bounds():
    assert Bounded(-1.0, 1.0, shape=(2,)) == Bounded(-1.0, 1.0, shape=(2,))
    assert Bounded(-1.0, 1.0, shape=(2,)) != Bounded(-1.0, 2.0, shape=(2,))
    assert Bounded(-1.0, 1.0, shape=(2,)) != Unbounded(2)
    assert Bounded(-1.0, 1.0, shape=(2,)) == Bounded(-1.0, 1.0, shape=(2,), device="cpu")


def test_non_tensor():
    spec = NonTensor(shape=(2,), example_data="hello")
    data = spec.rand()
    assert isinstance(data, NonTensorData) and data.batch_size == (2,)
    assert data.data == "hello" and spec.zero().data == "hello"
    assert spec.rand((3,)).batch_size == (3, 2)
    assert spec.is_in(data) and spec.is_in(object()) and spec.is_in(NonTensorStack("a", "b"))
    assert spec.encode({"any": "thing"}).data == {"any": "thing"}
    assert spec.expand(4, 2).shape == (4, 2)
    assert spec[0].shape == ()
    assert spec == NonTensor(shape=(2,), example_data="other")  # example data is no constraint
    assert spec.clone() == spec and spec.to(torch.float32) is spec
    assert spec.dtype is None


def test_encode_scalars_and_lists():
    spec = Bounded(0.0, 10.0, shape=(1,))
    assert torch.equal(spec.encode(3), torch.tensor([3.0]))
    assert torch.equal(spec.encode(np.float64(2.5)), torch.tensor([2.5]))
    assert torch.equal(Unbounded((2, 2)).encode([1, 2, 3, 4]), torch.tensor([[1.0, 2], [3, 4]]))
