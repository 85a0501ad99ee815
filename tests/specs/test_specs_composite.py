"""Composite: nested keys, locking, child shapes, sampling, checking, copies, shape ops."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from specs_strategies import composite_specs, seeded
from tensordict import TensorDict, TensorDictBase

from hub.errors import SpecMismatchError
from hub.specs import Bounded, Categorical, Composite, NonTensor, OneHot, Unbounded

SETTINGS = settings(max_examples=25, deadline=None)


def make_spec() -> Composite:
    spec = Composite(observation=Unbounded((4, 3)), shape=(4,))
    spec["agent", "action"] = Bounded(-1.0, 1.0, shape=(4, 2))
    spec["agent", "done"] = Categorical(2, shape=(4, 1), dtype=torch.bool)
    return spec


# ------------------------------------------------------------------ keys
def test_nested_get_set_and_intermediates():
    spec = make_spec()
    assert spec["agent", "action"] is spec[("agent", "action")] is spec["agent"]["action"]
    assert isinstance(spec["agent"], Composite) and spec["agent"].shape == (4,)
    spec["a", "b", "c"] = Unbounded((4, 1))
    assert spec["a"].shape == spec["a", "b"].shape == (4,)
    assert ("a", "b", "c") in spec and ("a", "b") in spec and "a" in spec
    assert ("a", "x") not in spec and "x" not in spec and 3 not in spec
    assert spec.get(("a", "x")) is None and spec.get("x", 5) == 5
    spec.set(("a", ("b", "d")), Unbounded(4))
    assert ("a", "b", "d") in spec


def test_keys_items_values():
    spec = make_spec()
    assert spec.keys() == ["observation", "agent"]
    assert spec.keys(include_nested=True) == [
        "observation",
        "agent",
        ("agent", "action"),
        ("agent", "done"),
    ]
    assert spec.keys(True, True) == ["observation", ("agent", "action"), ("agent", "done")]
    assert spec.keys(leaves_only=True) == ["observation"]
    assert [k for k, _ in spec.items(True, True)] == spec.keys(True, True)
    assert spec.values(True, True)[1] is spec["agent", "action"]
    assert len(spec) == 2 and list(spec) == ["observation", "agent"]


def test_missing_key_errors_name_the_keys():
    spec = make_spec()
    with pytest.raises(KeyError, match="'nope' is not in this Composite; its keys are"):
        spec["nope"]
    with pytest.raises(KeyError, match="agent"):
        spec["agent", "nope"]
    with pytest.raises(KeyError, match="not a Composite"):
        spec["observation", "x"] = Unbounded(4)
    with pytest.raises(KeyError):
        del spec["agent", "nope"]


def test_delete_and_update():
    spec = make_spec()
    del spec["agent", "done"]
    assert spec.keys(True) == ["observation", "agent", ("agent", "action")]
    other = Composite(shape=(4,))
    other["agent", "reward"] = Unbounded((4, 1))
    other["observation"] = Unbounded((4, 5))
    spec.update(other)
    assert ("agent", "action") in spec and ("agent", "reward") in spec
    assert spec["observation"].shape == (4, 5)
    spec.update({"extra": Unbounded(4)})
    assert "extra" in spec


def test_plain_dicts_become_nested_composites():
    spec = Composite({"a": {"b": Unbounded(3)}}, c=Unbounded(1))
    assert isinstance(spec["a"], Composite) and spec["a", "b"].shape == (3,)


def test_child_shape_must_start_with_composite_shape():
    spec = Composite(shape=(4,))
    with pytest.raises(ValueError, match=r"'obs' has shape \[3\].*Composite's shape \[4\]"):
        spec["obs"] = Unbounded(3)
    with pytest.raises(ValueError, match=r"\('x', 'y'\)"):
        spec["x", "y"] = Unbounded(3)
    assert "x" not in spec  # no half-built intermediate is left behind
    with pytest.raises(ValueError):
        Composite(obs=Unbounded(3), shape=(2,))
    with pytest.raises(TypeError, match="must be specs"):
        spec["t"] = torch.zeros(4)


def test_shape_setter_checks_children():
    spec = Composite(obs=Unbounded((4, 3)))
    spec.shape = (4,)
    assert spec.shape == (4,) and spec.rand().batch_size == (4,)
    with pytest.raises(ValueError, match="'obs'"):
        spec.shape = (3,)


# -------------------------------------------------------------- locking
def test_lock_and_unlock_are_recursive():
    spec = make_spec().lock_()
    assert spec.is_locked and spec["agent"].is_locked
    for change in (
        lambda: spec.__setitem__("new", Unbounded(4)),
        lambda: spec.__setitem__(("agent", "new"), Unbounded(4)),
        lambda: spec.__setitem__(("new", "deep"), Unbounded(4)),
        lambda: spec.__delitem__("observation"),
        lambda: spec.__delitem__(("agent", "action")),
    ):
        with pytest.raises(RuntimeError, match="locked.*unlock_\\(\\)"):
            change()
    assert spec.keys(True) == make_spec().keys(True)
    spec.unlock_()
    assert not spec.is_locked and not spec["agent"].is_locked
    spec["agent", "new"] = Unbounded(4)
    assert not spec.clone().is_locked


# ------------------------------------------------------- values and checks
def test_rand_zero_one_give_tensordicts():
    spec = make_spec()
    spec["text"] = NonTensor(shape=(4,), example_data="hi")
    for fill in (spec.rand, spec.zero, spec.one):
        td = fill()
        assert isinstance(td, TensorDict) and td.batch_size == (4,)
        assert isinstance(td["agent"], TensorDictBase) and td["agent"].batch_size == (4,)
        assert td["agent", "action"].shape == (4, 2)
        assert fill((2, 3)).batch_size == (2, 3, 4)
    assert spec.is_in(spec.rand()) and spec.is_in(spec.rand((2,)))
    assert spec.zero()["text"] == "hi"
    assert not spec.zero()["agent", "action"].any()


def test_is_in():
    spec = make_spec()
    td = spec.rand()
    td["extra"] = torch.zeros(4)  # extra keys are allowed
    assert spec.is_in(td)
    td["agent", "action"] = torch.full((4, 2), 3.0)
    assert not spec.is_in(td)
    del td["agent", "action"]
    assert not spec.is_in(td)
    assert not spec.is_in(torch.zeros(3))
    assert spec.is_in(spec.rand().to_dict())  # plain dicts work too
    empty_child = Composite(a=Unbounded(1), b=Composite())
    assert empty_child.is_in(TensorDict(a=torch.zeros(1)))


def test_assert_is_in_names_the_nested_key():
    spec = make_spec()
    td = spec.rand()
    spec.assert_is_in(td)
    td["agent", "done"] = torch.ones(4, 1)
    with pytest.raises(SpecMismatchError) as info:
        spec.assert_is_in(td)
    err = info.value
    assert err.key == ("agent", "done")
    assert "Categorical(shape=[4, 1], dtype=bool, n=2)" in err.expected
    assert "dtype float32" in err.got and "wrong dtype" in err.got
    del td["agent", "done"]
    with pytest.raises(SpecMismatchError, match="missing"):
        spec.assert_is_in(td)
    with pytest.raises(SpecMismatchError, match=r"entry \('next', 'observation'\)"):
        spec.assert_is_in(TensorDict(observation=torch.zeros(4)), key="next")
    assert spec.explain(spec.rand()) is None
    assert "missing" in spec.explain(TensorDict())


def test_project_and_encode():
    spec = make_spec()
    td = spec.rand()
    td["agent", "action"] = torch.full((4, 2), 7.0)
    projected = spec.project(td)
    assert spec.is_in(projected) and torch.equal(projected["agent", "action"], torch.ones(4, 2))
    assert td["agent", "action"].max() == 7.0  # the input is not modified
    encoded = spec.encode(
        {
            "observation": np.zeros((4, 3)),
            "agent": {"action": np.zeros((4, 2)), "done": np.zeros((4, 1), dtype=bool)},
        }
    )
    assert spec.is_in(encoded) and encoded.batch_size == (4,)
    assert encoded["observation"].dtype == torch.float32
    with pytest.raises(KeyError, match="'bad'.*not in the spec"):
        spec.encode({"bad": 1})


# ----------------------------------------------------------- shape ops
def test_expand_index_squeeze_stack():
    spec = make_spec()
    expanded = spec.expand(2, 4)
    assert expanded.shape == (2, 4) and expanded["agent", "action"].shape == (2, 4, 2)
    assert expanded.is_in(expanded.rand())
    assert spec.expand((2, 4)) == expanded
    with pytest.raises(ValueError, match="must end with"):
        spec.expand(2, 3)
    assert expanded[0] == spec
    assert expanded[:, 1:3].shape == (2, 2)
    assert expanded[:, 1:3]["agent", "action"].shape == (2, 2, 2)
    assert spec.unsqueeze(0).shape == (1, 4)
    assert spec.unsqueeze(-1)["observation"].shape == (4, 1, 3)
    assert spec.unsqueeze(0).squeeze() == spec
    assert torch.stack([spec, spec.clone()], 0) == expanded
    assert torch.stack([spec, spec], 1).shape == (4, 2)
    different = make_spec()
    different["observation"] = Unbounded((4, 5))
    with pytest.raises(ValueError, match="equal specs"):
        torch.stack([spec, different])


def test_empty_clone_to_and_equality():
    spec = make_spec()
    assert spec.empty() == Composite(shape=(4,)) and spec.empty().shape == (4,)
    copy = spec.clone()
    assert copy == spec
    copy["agent", "action"].low.fill_(-5.0)
    copy["observation"] = Unbounded((4, 7))
    assert spec["agent", "action"].low.min() == -1.0
    assert spec["observation"].shape == (4, 3)
    assert copy != spec and spec != {"observation": None}
    moved = spec.to("cpu")
    assert moved.device == torch.device("cpu") and moved["agent", "action"].device.type == "cpu"
    assert moved == spec
    doubled = spec.to(torch.float64)
    assert doubled["observation"].dtype == torch.float64
    assert doubled["agent", "done"].dtype == torch.bool  # only float leaves are cast
    on_device = Composite(obs=Unbounded(3), device="cpu")
    assert on_device["obs"].device == torch.device("cpu")
    assert on_device.rand().device == torch.device("cpu")


def test_repr_is_readable():
    text = repr(make_spec())
    assert text.startswith("Composite(\n    observation: Unbounded(shape=[4, 3]")
    assert "\n    agent: Composite(\n        action: Bounded(" in text
    assert repr(Composite()) == "Composite(shape=[])"


def test_dynamic_composite():
    spec = Composite(obs=Unbounded((-1, 3)), shape=(-1,))
    assert spec.rand().batch_size == (1,)
    assert spec.is_in(TensorDict(obs=torch.zeros(5, 3), batch_size=[5]))
    assert spec.expand(2, -1).shape == (2, -1)


def test_one_hot_leaves_in_composite():
    spec = Composite(action=OneHot(3, shape=(2, 3)), shape=(2,))
    assert spec.is_in(spec.rand())
    assert spec[1]["action"] == OneHot(3)


# ----------------------------------------------------------- properties
@SETTINGS
@given(spec=composite_specs(), lead=st.lists(st.integers(1, 3), max_size=2), _=seeded())
def test_random_composites(spec, lead, _):
    td = spec.rand(tuple(lead))
    assert td.batch_size == (*lead, *spec.shape)
    assert spec.is_in(td)
    assert spec.zero().batch_size == spec.shape
    spec.assert_is_in(spec.rand())
    copy = spec.clone()
    assert copy == spec
    expanded = spec.expand(2, *spec.shape)
    assert expanded.is_in(expanded.rand())
    assert expanded[0] == spec
    assert set(spec.keys(True, True)) <= set(spec.keys(True))
    for key in spec.keys(True, True):
        assert td[key].shape[: len(lead) + spec.ndim] == td.batch_size
    leaf_keys = spec.keys(True, True)
    if leaf_keys:
        del copy[leaf_keys[0]]
        assert copy != spec and leaf_keys[0] in spec
