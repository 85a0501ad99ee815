"""Property tests that hold for every leaf spec: sampling, projecting, shapes, encoding, copies."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from specs_strategies import KINDS, arbitrary_tensors, leaf_specs, seeded

from hub.specs import Bounded, TensorSpec

SETTINGS = settings(max_examples=25, deadline=None)


def batch_ndim(spec: TensorSpec) -> int:
    return spec.ndim - spec._event_ndim


@SETTINGS
@given(spec=leaf_specs(), lead=st.lists(st.integers(1, 3), max_size=2), _=seeded())
def test_rand_is_in(spec, lead, _):
    value = spec.rand()
    assert value.shape == spec.shape and value.dtype == spec.dtype
    assert spec.is_in(value)
    batch = spec.rand(tuple(lead))
    assert batch.shape == (*lead, *spec.shape)
    assert spec.is_in(batch)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_rand_is_in_each_kind(kind, data):
    spec = data.draw(leaf_specs(kind=kind))
    data.draw(seeded())
    assert spec.is_in(spec.rand((5,)))


@SETTINGS
@given(data=st.data())
def test_project_lands_in_spec(data):
    spec = data.draw(leaf_specs())
    value = data.draw(arbitrary_tensors(spec.shape))
    projected = spec.project(value)
    assert projected.shape == value.shape
    assert spec.is_in(projected), (spec, value, projected)


@SETTINGS
@given(spec=leaf_specs(), _=seeded())
def test_project_keeps_values_in_spec(spec, _):
    value = spec.rand()
    assert torch.equal(spec.project(value), value)


@SETTINGS
@given(spec=leaf_specs(), lead=st.lists(st.integers(1, 3), max_size=2))
def test_zero_and_one_shapes(spec, lead):
    for fill in (spec.zero, spec.one):
        assert fill().shape == spec.shape and fill().dtype == spec.dtype
        assert fill(tuple(lead)).shape == (*lead, *spec.shape)
    assert not spec.zero().any()


@SETTINGS
@given(spec=leaf_specs(), lead=st.lists(st.integers(1, 3), min_size=1, max_size=2), _=seeded())
def test_expand(spec, lead, _):
    new_shape = (*lead, *spec.shape)
    for expanded in (spec.expand(*new_shape), spec.expand(new_shape)):
        assert expanded.shape == new_shape
        assert expanded.dtype == spec.dtype
        assert expanded.is_in(expanded.rand())
    # -1 in the trailing part keeps the current size
    keep = (*lead, *([-1] * spec.ndim))
    assert spec.expand(keep).shape == new_shape
    if spec.ndim:
        with pytest.raises(ValueError, match="must end with the current shape"):
            spec.expand(*lead, *[d + 1 for d in spec.shape])
        with pytest.raises(ValueError, match="must end with the current shape"):
            spec.expand(*spec.shape[1:])


@st.composite
def batch_index(draw, shape: torch.Size, n_batch: int):
    items = []
    for d in shape[: draw(st.integers(0, n_batch))]:
        if draw(st.booleans()):
            items.append(draw(st.integers(-d, d - 1)))
        else:
            start = draw(st.none() | st.integers(-d, d))
            stop = draw(st.none() | st.integers(-d, d))
            step = draw(st.none() | st.integers(1, 2))
            items.append(slice(start, stop, step))
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@SETTINGS
@given(data=st.data())
def test_indexing_batch_dims(data):
    spec = data.draw(leaf_specs())
    data.draw(seeded())
    index = data.draw(batch_index(spec.shape, batch_ndim(spec)))
    indexed = spec[index]
    assert indexed.shape == spec.zero()[index].shape
    assert indexed.is_in(indexed.rand())
    if isinstance(spec, Bounded):
        assert torch.equal(indexed.low, spec.low[index])
        assert torch.equal(indexed.high, spec.high[index])


@SETTINGS
@given(spec=leaf_specs(), _=seeded())
def test_indexing_too_many_dims(spec, _):
    with pytest.raises(IndexError, match="too many indices"):
        spec[(0,) * (batch_ndim(spec) + 1)]


@SETTINGS
@given(spec=leaf_specs(), data=st.data())
def test_squeeze_unsqueeze(spec, data):
    dim = data.draw(st.integers(0, batch_ndim(spec)))
    unsqueezed = spec.unsqueeze(dim)
    assert unsqueezed.shape == spec.zero().unsqueeze(dim).shape
    assert unsqueezed.squeeze(dim) == spec
    squeezed = spec.squeeze()
    expected = [s for i, s in enumerate(spec.shape) if i >= batch_ndim(spec) or s != 1]
    assert list(squeezed.shape) == expected
    assert squeezed.is_in(squeezed.rand())


@SETTINGS
@given(spec=leaf_specs(), data=st.data())
def test_stack_equal_specs(spec, data):
    n = data.draw(st.integers(1, 3))
    dim = data.draw(st.integers(0, batch_ndim(spec)))
    stacked = torch.stack([spec.clone() for _ in range(n)], dim)
    assert stacked.shape == torch.stack([spec.zero()] * n, dim).shape
    assert stacked.is_in(stacked.rand())
    assert torch.stack([spec] * n) == spec.expand(n, *spec.shape)


@SETTINGS
@given(spec=leaf_specs(), _=seeded())
def test_encode_round_trips(spec, _):
    value = spec.rand()
    encoded = spec.encode(value.numpy())
    assert encoded.dtype == spec.dtype and torch.equal(encoded, value)
    assert torch.equal(spec.encode(value.tolist()), value)
    assert torch.equal(spec.encode(value), value)
    if spec.shape.numel() > 0:  # same number of elements: reshaped to the spec's shape
        assert torch.equal(spec.encode(value.numpy().reshape(-1)), value)


@SETTINGS
@given(spec=leaf_specs(), _=seeded())
def test_encode_copies_numpy(spec, _):
    array = spec.rand().numpy().copy()
    encoded = spec.encode(array)
    before = encoded.clone()
    array[...] = 0
    assert torch.equal(encoded, before)


@SETTINGS
@given(spec=leaf_specs())
def test_clone_equal_and_independent(spec):
    copy = spec.clone()
    assert copy == spec and copy is not spec
    if isinstance(spec, Bounded):
        copy.low.fill_(-7)
        assert not torch.equal(spec.low, copy.low) or bool((spec.low == -7).all())


@SETTINGS
@given(spec=leaf_specs(), other=leaf_specs())
def test_equality_is_consistent(spec, other):
    assert spec == spec.clone()
    if spec == other:
        assert repr(spec) == repr(other) and other == spec
    assert (spec != other) is not (spec == other)


@SETTINGS
@given(spec=leaf_specs(), _=seeded())
def test_to_device_and_dtype(spec, _):
    on_cpu = spec.to("cpu")
    assert on_cpu.device == torch.device("cpu") and on_cpu == spec
    assert on_cpu.is_in(on_cpu.rand())
    assert spec.to(spec.dtype) is spec


@SETTINGS
@given(spec=leaf_specs(), lead=st.lists(st.integers(1, 3), min_size=1, max_size=2))
def test_is_in_rejects_wrong_dtype_and_shape(spec, lead):
    value = spec.zero()
    other_dtype = torch.float16 if spec.dtype != torch.float16 else torch.float32
    assert not spec.is_in(value.to(other_dtype))
    assert not spec.is_in(value.numpy())
    if spec.ndim:
        assert not spec.is_in(value.reshape(-1)[:0])
        assert not spec.is_in(torch.zeros(*spec.shape, 9, dtype=spec.dtype))


@SETTINGS
@given(spec=leaf_specs(dynamic=True), size=st.integers(2, 4), _=seeded())
def test_dynamic_dims(spec, size, _):
    value = spec.rand()
    assert value.shape == tuple(1 if d == -1 else d for d in spec.shape)
    assert spec.is_in(value)
    grown = value.expand([size if d == -1 else d for d in spec.shape])
    assert spec.is_in(grown)
    expanded = spec.expand(2, *spec.shape)
    assert expanded.shape == (2, *spec.shape)
    assert expanded.is_in(grown.expand(2, *grown.shape))
    assert spec.zero().shape == value.shape
    assert torch.equal(spec.encode(grown.numpy()), grown)


def test_repr_is_short_and_readable():
    spec = Bounded(-1.0, 1.0, shape=(2, 3))
    assert repr(spec) == "Bounded(shape=[2, 3], dtype=float32, low=-1.0, high=1.0)"
    assert "device=cpu" in repr(spec.to("cpu"))
    big = Bounded(torch.arange(10.0), torch.arange(10.0) + 1)
    assert "min=0.0" in repr(big) and len(repr(big)) < 120


def test_encode_rejects_wrong_size_and_objects():
    spec = Bounded(0.0, 1.0, shape=(3,))
    with pytest.raises(ValueError, match="cannot encode"):
        spec.encode(np.zeros(4))
    with pytest.raises(TypeError, match="not numeric"):
        spec.encode({"a": 1})
    # batches of values keep their leading dims
    assert spec.encode(np.zeros((5, 3))).shape == (5, 3)
    # negative strides and non-native byte order are handled
    assert torch.equal(spec.encode(np.arange(3.0)[::-1]), torch.tensor([2.0, 1.0, 0.0]))
    assert spec.encode(np.zeros(3, dtype=">f8")).dtype == torch.float32
