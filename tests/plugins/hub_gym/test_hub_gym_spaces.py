"""Spec conversions of gym and gymnasium spaces, as TorchRL does them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import hub
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    NonTensor,
    OneHot,
    Unbounded,
)
from tests.plugins.hub_gym.gym_helpers import backend_params


@pytest.fixture(params=backend_params())
def spaces(request):
    return importlib.import_module(f"{request.param}.spaces")


def test_box(spaces) -> None:
    spec = hub.convert_spec(spaces.Box(-1.0, 2.0, shape=(3,), dtype=np.float32))
    assert isinstance(spec, Bounded) and spec.shape == (3,) and spec.dtype == torch.float32
    assert spec.low.tolist() == [-1.0] * 3 and spec.high.tolist() == [2.0] * 3


def test_scalar_box_gets_a_dim_and_batch_dims_come_first(spaces) -> None:
    spec = hub.convert_spec(spaces.Box(0.0, 1.0, shape=()), batch_size=(4,))
    assert spec.shape == (4, 1)


def test_unbounded_and_image_boxes(spaces) -> None:
    assert isinstance(hub.convert_spec(spaces.Box(-np.inf, np.inf, shape=(2,))), Unbounded)
    image = hub.convert_spec(spaces.Box(0, 255, shape=(8, 8, 3), dtype=np.uint8))
    assert isinstance(image, Bounded) and image.dtype == torch.uint8


def test_discrete(spaces) -> None:
    assert hub.convert_spec(spaces.Discrete(4)) == OneHot(4)
    assert hub.convert_spec(spaces.Discrete(4), categorical_action_encoding=True) == Categorical(4)
    assert hub.convert_spec(spaces.Discrete(4), batch_size=(2,)).shape == (2, 4)


def test_multi_discrete(spaces) -> None:
    space = spaces.MultiDiscrete([2, 3])
    assert isinstance(hub.convert_spec(space), MultiOneHot)
    spec = hub.convert_spec(space, categorical_action_encoding=True)
    assert isinstance(spec, MultiCategorical) and spec.shape == (2,)


def test_multi_binary(spaces) -> None:
    spec = hub.convert_spec(spaces.MultiBinary(5))
    assert isinstance(spec, Binary) and spec.shape == (5,) and spec.dtype == torch.int8


def test_dict_and_tuple(spaces) -> None:
    space = spaces.Dict({"pos": spaces.Box(-1.0, 1.0, shape=(2,)), "id": spaces.Discrete(3)})
    spec = hub.convert_spec(space, batch_size=(2,))
    assert isinstance(spec, Composite) and spec.shape == (2,)
    assert spec["pos"].shape == (2, 2) and spec["id"].shape == (2, 3)
    pair = hub.convert_spec(spaces.Tuple([spaces.Discrete(2), spaces.MultiBinary(2)]))
    assert pair.keys() == ["0", "1"]


def test_text_and_sequences(spaces) -> None:
    if not hasattr(spaces, "Text"):
        pytest.skip(f"{spaces.__name__} has no Text/Sequence spaces")
    assert isinstance(hub.convert_spec(spaces.Text(8)), NonTensor)
    seq = hub.convert_spec(spaces.Sequence(spaces.Box(0.0, 1.0, shape=(2,))))
    assert seq.shape == (-1, 2)
    nested = hub.convert_spec(spaces.Sequence(spaces.Text(3)))
    assert isinstance(nested, NonTensor)


def test_conversions_are_in_spec(spaces) -> None:
    space = spaces.Dict({"a": spaces.Box(-1.0, 1.0, shape=(2,)), "b": spaces.MultiBinary(3)})
    spec = hub.convert_spec(space)
    assert spec.is_in(spec.rand())
