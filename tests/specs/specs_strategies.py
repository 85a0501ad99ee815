"""Hypothesis strategies for the spec tests: random leaf specs, batch shapes and tensors."""

from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    TensorSpec,
    Unbounded,
)

KINDS = (
    "unbounded",
    "bounded",
    "categorical",
    "one_hot",
    "multi_categorical",
    "multi_one_hot",
    "binary",
)

sizes = st.integers(1, 3)


@st.composite
def batch_shapes(draw, max_dims: int = 2, dynamic: bool = False) -> tuple[int, ...]:
    """Batch dims; with ``dynamic`` some of them may be -1."""
    dims = draw(st.lists(sizes, max_size=max_dims))
    if dynamic:
        dims = [-1 if draw(st.booleans()) else d for d in dims]
    return tuple(dims)


def _float_bounds(draw, k: int | None) -> tuple[object, object]:
    """Scalar or per-element float bounds, sometimes infinite."""
    finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)
    widths = st.floats(0, 1e3, allow_nan=False, width=32)
    if k is None:
        low = draw(finite)
        high = low + draw(widths)
        if draw(st.integers(0, 5)) == 0:
            low = -math.inf
        if draw(st.integers(0, 5)) == 0:
            high = math.inf
        return low, high
    lows = draw(st.lists(finite, min_size=k, max_size=k))
    highs = [lo + draw(widths) for lo in lows]
    return torch.tensor(lows), torch.tensor(highs)


def _int_bounds(draw, k: int | None) -> tuple[object, object]:
    ints = st.integers(-50, 50)
    if k is None:
        low = draw(ints)
        return low, low + draw(st.integers(0, 20))
    lows = draw(st.lists(ints, min_size=k, max_size=k))
    highs = [lo + draw(st.integers(0, 20)) for lo in lows]
    return torch.tensor(lows), torch.tensor(highs)


@st.composite
def leaf_specs(
    draw, kind: str | None = None, batch: tuple[int, ...] | None = None, dynamic: bool = False
) -> TensorSpec:
    """A random leaf spec of ``kind`` (any kind if None) with batch dims ``batch``."""
    if kind is None:
        kind = draw(st.sampled_from(KINDS))
    if batch is None:
        batch = draw(batch_shapes(dynamic=dynamic))
    if kind == "unbounded":
        event = tuple(draw(st.lists(sizes, max_size=2)))
        dtype = draw(
            st.sampled_from(
                [torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool]
            )
        )
        return Unbounded((*batch, *event), dtype=dtype)
    if kind == "bounded":
        event = tuple(draw(st.lists(sizes, min_size=0, max_size=2)))
        dtype = draw(st.sampled_from([torch.float32, torch.float64, torch.int64, torch.int16]))
        k = event[-1] if event and draw(st.booleans()) else None
        low, high = (_float_bounds if dtype.is_floating_point else _int_bounds)(draw, k)
        return Bounded(low, high, shape=(*batch, *event), dtype=dtype)
    if kind == "categorical":
        if draw(st.booleans()):
            return Categorical(2, shape=(*batch, 1), dtype=torch.bool)
        n = draw(st.integers(1, 6))
        dtype = draw(st.sampled_from([torch.int64, torch.int32, torch.uint8]))
        return Categorical(n, shape=batch, dtype=dtype)
    if kind == "one_hot":
        n = draw(st.integers(1, 5))
        dtype = draw(st.sampled_from([torch.bool, torch.int64, torch.uint8, torch.float32]))
        return OneHot(n, shape=(*batch, n), dtype=dtype)
    if kind == "multi_categorical":
        nvec = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
        return MultiCategorical(nvec, shape=(*batch, len(nvec)))
    if kind == "multi_one_hot":
        nvec = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
        dtype = draw(st.sampled_from([torch.bool, torch.int64]))
        return MultiOneHot(nvec, shape=(*batch, sum(nvec)), dtype=dtype)
    if kind == "binary":
        n = draw(st.integers(1, 4))
        dtype = draw(st.sampled_from([torch.int8, torch.bool, torch.uint8, torch.float32]))
        return Binary(n, shape=(*batch, n), dtype=dtype)
    raise AssertionError(kind)


@st.composite
def composite_specs(draw, depth: int = 2) -> Composite:
    """A random Composite with a batch shape, leaves and maybe nested Composites."""
    batch = draw(batch_shapes(max_dims=2))
    spec = Composite(shape=batch)
    names = draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True))
    for name in names:
        if depth > 0 and draw(st.integers(0, 3)) == 0:
            child = draw(composite_specs(depth=depth - 1))
            spec[name] = child.expand(*batch, *child.shape)
        else:
            spec[name] = draw(leaf_specs(batch=batch))
    return spec


@st.composite
def arbitrary_tensors(draw, shape: torch.Size) -> torch.Tensor:
    """A tensor of ``shape`` (dynamic dims set to 1) with arbitrary finite values."""
    torch.manual_seed(draw(st.integers(0, 2**31 - 1)))
    safe = [1 if d == -1 else d for d in shape]
    dtype = draw(st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool]))
    if dtype == torch.bool:
        return torch.rand(safe) > 0.5
    scale = draw(st.sampled_from([0.5, 3.0, 100.0, 1e6]))
    values = torch.randn(safe, dtype=torch.float64) * scale
    return values.to(dtype)


def seeded() -> st.SearchStrategy[int]:
    """A torch seed drawn by hypothesis, so failures replay."""
    return st.integers(0, 2**31 - 1).map(lambda s: torch.manual_seed(s) and s)
