"""dm_env specs -> hub specs, through hub.convert_spec (the plugin's registered conversions)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from hub.specs import Bounded, Categorical, Composite, NonTensor, OneHot, Unbounded

specs = pytest.importorskip("dm_env.specs")
pytest.importorskip("dm_control")


def test_array_becomes_unbounded_float32_by_default() -> None:
    spec = hub.convert_spec(specs.Array((3,), np.float64, name="velocity"))
    assert spec == Unbounded((3,), dtype=torch.float32)


def test_dtype_none_keeps_the_backend_dtype() -> None:
    spec = hub.convert_spec(specs.Array((3,), np.float64), dtype=None)
    assert spec.dtype == torch.float64


def test_scalar_arrays_get_a_dim_and_batch_dims_come_first() -> None:
    spec = hub.convert_spec(specs.Array((), np.float64), batch_size=(4,))
    assert spec.shape == torch.Size([4, 1])


def test_integer_arrays_keep_their_dtype() -> None:
    spec = hub.convert_spec(specs.Array((2,), np.int32))
    assert spec.dtype == torch.int32


def test_boolean_arrays_become_boolean_categoricals() -> None:
    spec = hub.convert_spec(specs.Array((2,), bool))
    assert isinstance(spec, Categorical) and spec.dtype == torch.bool


def test_bounded_array_keeps_per_element_bounds() -> None:
    raw = specs.BoundedArray((2,), np.float64, minimum=[-1.0, 0.0], maximum=[1.0, 2.0])
    spec = hub.convert_spec(raw)
    assert isinstance(spec, Bounded)
    assert spec.low.tolist() == [-1.0, 0.0] and spec.high.tolist() == [1.0, 2.0]
    assert spec.is_in(torch.tensor([0.5, 1.5])) and not spec.is_in(torch.tensor([0.5, 2.5]))


def test_bounded_array_with_scalar_bounds_broadcasts() -> None:
    spec = hub.convert_spec(specs.BoundedArray((3,), np.float64, -2.0, 2.0), batch_size=(2,))
    assert spec.shape == torch.Size([2, 3]) and spec.high.unique().tolist() == [2.0]


def test_infinite_bounds_give_unbounded() -> None:
    spec = hub.convert_spec(specs.BoundedArray((2,), np.float64, -np.inf, np.inf))
    assert isinstance(spec, Unbounded)


def test_discrete_array_one_hot_or_categorical() -> None:
    raw = specs.DiscreteArray(5)
    assert isinstance(hub.convert_spec(raw), OneHot)
    categorical = hub.convert_spec(raw, categorical_action_encoding=True)
    assert categorical == Categorical(5, shape=(), dtype=torch.int64)


def test_string_array_is_non_tensor() -> None:
    assert isinstance(hub.convert_spec(specs.StringArray(())), NonTensor)


def test_nested_dicts_become_nested_composites() -> None:
    from hub_dm_control.specs import dict_to_spec

    raw = {
        "joints": specs.Array((4,), np.float64),
        "sensors": {"touch": specs.BoundedArray((2,), np.float64, 0.0, 1.0)},
    }
    spec = dict_to_spec(raw, batch_size=(3,))
    assert isinstance(spec, Composite) and spec.shape == torch.Size([3])
    assert spec.keys(include_nested=True, leaves_only=True) == ["joints", ("sensors", "touch")]
    assert spec["sensors", "touch"].shape == torch.Size([3, 2])


def test_suite_specs_convert() -> None:
    from dm_control import suite
    from hub_dm_control.specs import dict_to_spec

    env = suite.load("walker", "walk")
    spec = dict_to_spec(env.observation_spec())
    assert spec.keys() == ["orientations", "height", "velocity"]
    assert spec["height"].shape == torch.Size([1])
    action = hub.convert_spec(env.action_spec())
    assert action.shape == torch.Size([6]) and action.dtype == torch.float32
