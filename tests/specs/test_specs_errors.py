"""Error messages name what was wrong, what was expected and what to do."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hub.errors import HubError, SpecMismatchError
from hub.specs import Bounded, Categorical, Composite, MultiOneHot, OneHot, Unbounded
from hub.specs.base import stack_specs


@pytest.mark.parametrize(
    "spec, value, got",
    [
        (
            Bounded(-1.0, 1.0, shape=(2,)),
            torch.tensor([0.0, 2.0]),
            "values [0.0, 2.0], outside [-1.0, 1.0]",
        ),
        (Bounded(-1.0, 1.0, shape=(2,)), torch.zeros(3), "shape [3]"),
        (
            Bounded(-1.0, 1.0, shape=(2,)),
            torch.zeros(2, dtype=torch.float64),
            "wrong dtype, expected float32",
        ),
        (Unbounded(2), np.zeros(2), "a numpy array of shape [2]"),
        (Unbounded(2), [1.0, 2.0], "a list ([1.0, 2.0]), not a tensor"),
        (Categorical(3), torch.tensor(-1), "outside [0, 3)"),
        (OneHot(3), torch.tensor([True, True, False]), "exactly one 1"),
        (MultiOneHot([2, 2]), torch.tensor([1, 0, 0, 0]).bool(), "exactly one 1 (nvec=[2, 2])"),
    ],
)
def test_assert_is_in_names_key_expected_and_got(spec, value, got):
    with pytest.raises(SpecMismatchError) as info:
        spec.assert_is_in(value, key="obs")
    err = info.value
    assert isinstance(err, HubError) and isinstance(err, ValueError)
    assert err.key == "obs" and err.expected == repr(spec)
    assert got in err.got
    assert "'obs'" in str(err) and repr(spec) in str(err) and got in str(err)


def test_assert_is_in_passes_silently():
    spec = Bounded(-1.0, 1.0, shape=(2,))
    assert spec.assert_is_in(spec.rand(), key="action") is None
    assert spec.explain(spec.rand()) is None


def test_big_values_are_summarised():
    err_got = Bounded(0.0, 1.0, shape=(100,)).explain(torch.full((100,), 5.0))
    assert "min=5.0, max=5.0" in err_got and len(err_got) < 200


def test_constructor_and_shape_errors_say_what_to_do():
    with pytest.raises(ValueError, match="use -1 for a dynamic dim"):
        Unbounded((-2, 3))
    with pytest.raises(TypeError, match="a shape must be an int or a sequence of ints"):
        Unbounded("abc")
    with pytest.raises(ValueError, match=r"expand\(\*batch_dims, \*spec.shape\)"):
        Unbounded(3).expand(4)
    with pytest.raises(TypeError, match="ints, slices or tuples"):
        Unbounded((4, 3))[[0, 1]]
    with pytest.raises(IndexError, match="out of range"):
        Unbounded((4, 3))[4]
    with pytest.raises(ValueError, match="NaN"):
        Bounded(float("nan"), 1.0, shape=(1,))
    with pytest.raises(ValueError, match="different specs is not supported"):
        torch.stack([Unbounded(3), Unbounded(4)])
    with pytest.raises(ValueError, match="at least one spec"):
        stack_specs([])
    with pytest.raises(TypeError, match="Composite keys are strings"):
        Composite()[(1, "a"),] = Unbounded(1)
