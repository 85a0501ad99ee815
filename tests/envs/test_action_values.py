"""Action values: discrete ones are checked at every step (checks or not), equivalent encodings
are cast, and non-finite continuous actions are refused only with ``checks=True``."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import hub
from hub import EnvBase
from hub.errors import SpecMismatchError
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


class ActionEcho(EnvBase):
    """An env of any action spec whose observation is the action it was given (as float)."""

    def __init__(self, action: TensorSpec, batch: tuple[int, ...] = (2,), **kwargs) -> None:
        super().__init__(batch_size=batch, **kwargs)
        size = action.shape[len(batch) :].numel()
        self.observation_spec = Composite(observation=Unbounded((*batch, size)), shape=batch)
        self.action_spec = action
        self.received: list[torch.Tensor] = []

    def _reset(self, tensordict):
        obs = torch.zeros(self.observation_spec["observation"].shape)
        return TensorDict({"observation": obs}, self.batch_size)

    def _step(self, tensordict):
        action = tensordict.get("action")
        self.received.append(action)
        batch = tensordict.batch_size
        obs = action.reshape(*batch, -1).float()
        return TensorDict({"observation": obs, "reward": torch.zeros(*batch, 1)}, batch)

    def _set_seed(self, seed):
        pass


def _step_with(env: EnvBase, action: torch.Tensor) -> TensorDict:
    td = env.reset()
    td.set("action", action)
    return env.step(td)


MANY_ROWS = torch.eye(100, dtype=torch.bool)[torch.tensor([[1, 2, 3, 99], [0, 0, 0, 0]])]

# one spec of each discrete kind (batch of 2), with valid values and values that must raise
CASES = {
    "categorical": (
        Categorical(4, shape=(2,)),
        torch.tensor([3, 0]),
        [torch.tensor([-1, 0]), torch.tensor([4, 0]), torch.tensor([2**31 - 1, 0])],
    ),
    "categorical_many": (  # more values than a Python list is used for: a torch reduction
        Categorical(5, shape=(2, 200)),
        torch.arange(400).reshape(2, 200) % 5,
        [torch.full((2, 200), 5), torch.full((2, 200), -1)],
    ),
    "one_hot_many": (  # more values than a Python list is used for: a uint8 matrix product
        OneHot(100, shape=(2, 4, 100)),
        MANY_ROWS,
        [MANY_ROWS & False, MANY_ROWS | True, MANY_ROWS | torch.eye(100, dtype=torch.bool)[5]],
    ),
    "one_hot": (
        OneHot(3, shape=(2, 3)),
        torch.tensor([[False, True, False], [True, False, False]]),
        [
            torch.tensor([[False, False, False], [True, False, False]]),  # all False
            torch.tensor([[True, True, True], [True, False, False]]),  # all True
            torch.tensor([[True, True, False], [True, False, False]]),  # two-hot
        ],
    ),
    "one_hot_wide": (  # n >= 256: counted with torch rather than a uint8 product
        OneHot(300, shape=(2, 300)),
        torch.eye(300, dtype=torch.bool)[[4, 299]],
        [
            torch.zeros(2, 300, dtype=torch.bool),
            torch.eye(300, dtype=torch.bool)[[4, 299]] | torch.eye(300, dtype=torch.bool)[0],
            torch.ones(2, 300, dtype=torch.bool),
        ],
    ),
    "multi_categorical": (
        MultiCategorical([2, 3], shape=(2, 2)),
        torch.tensor([[1, 2], [0, 0]]),
        [torch.tensor([[1, 3], [0, 0]]), torch.tensor([[-1, 0], [0, 0]])],
    ),
    "multi_one_hot": (
        MultiOneHot([2, 3], shape=(2, 5)),
        torch.tensor([[0, 1, 0, 0, 1], [1, 0, 1, 0, 0]], dtype=torch.bool),
        [
            torch.tensor([[0, 0, 0, 0, 1], [1, 0, 1, 0, 0]], dtype=torch.bool),
            torch.tensor([[0, 1, 1, 1, 0], [1, 0, 1, 0, 0]], dtype=torch.bool),
        ],
    ),
    "binary_int": (
        Binary(3, shape=(2, 3), dtype=torch.int8),
        torch.tensor([[0, 1, 1], [0, 0, 0]], dtype=torch.int8),
        [torch.tensor([[0, 2, 1], [0, 0, 0]], dtype=torch.int8)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_discrete_values_are_checked_without_checks(name):
    spec, good, bads = CASES[name]
    env = ActionEcho(spec)
    assert not env.checks
    _step_with(env, good)
    for bad in bads:
        with pytest.raises(SpecMismatchError, match="'action'.*checked even with checks=False"):
            _step_with(env, bad)
    assert len(env.received) == 1  # no bad action reached _step


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_step_path_checks_discrete_values(name):
    spec, good, bads = CASES[name]
    env = ActionEcho(spec)
    bad = bads[0]
    td = env.reset().set("action", bad)
    with pytest.raises(SpecMismatchError):
        env.step_and_maybe_reset(td)
    with pytest.raises(SpecMismatchError):
        env.check_step_input(td)  # what an asynchronous send (step_send) runs
    with pytest.raises(SpecMismatchError):
        env.rollout(3, policy=lambda t: t.set("action", bad))
    with pytest.raises(SpecMismatchError):
        env.append_transform(hub.transforms.StepCounter()).rollout(
            3, policy=lambda t: t.set("action", bad)
        )
    assert env.received == []
    env.rollout(3, policy=lambda t: t.set("action", good))  # the env is fine afterwards


def test_the_error_names_the_key_the_range_and_what_came():
    env = ActionEcho(Categorical(6, shape=(2,)))
    with pytest.raises(SpecMismatchError) as info:
        _step_with(env, torch.tensor([-100000, 0]))
    err = info.value
    assert err.key == "action"
    assert "n=6" in str(err.expected) and "outside [0, 6)" in str(err)
    assert "[-100000, 0]" in str(err)


def test_one_hot_error_names_the_bad_rows():
    env = ActionEcho(OneHot(3, shape=(3, 3)), batch=(3,))
    action = torch.tensor([[1, 0, 0], [0, 0, 0], [1, 1, 0]], dtype=torch.bool)
    with pytest.raises(SpecMismatchError, match=r"exactly one 1 \(rows \[1, 2\]\)"):
        _step_with(env, action)


def test_batch_unlocked_envs_check_values_of_any_batch_size():
    env = ActionEcho(Categorical(3, shape=()), batch=())
    env.batch_locked = False
    td = TensorDict({"action": torch.tensor([0, 2, 1])}, [3])
    env.step(td)
    with pytest.raises(SpecMismatchError):
        env.step(TensorDict({"action": torch.tensor([0, 3, 1])}, [3]))


def test_bool_categories_and_flags_need_no_value_check():
    from hub.envs.action_checks import action_value_check

    assert action_value_check(Categorical(2, shape=(1,), dtype=torch.bool)) is None
    assert action_value_check(Binary(3, dtype=torch.bool)) is None
    assert action_value_check(Bounded(-1.0, 1.0, shape=(1,))) is None
    assert action_value_check(Unbounded((1,))) is None


# ------------------------------------------------------------------ equivalent encodings
def test_int_and_float_one_hots_are_cast_to_bool():
    env = ActionEcho(OneHot(3, shape=(2, 3)))
    want = torch.tensor([[False, True, False], [True, False, False]])
    for dtype in (torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64):
        data = _step_with(env, want.to(dtype))
        assert data["action"].dtype == torch.bool  # the input holds the cast action
        assert torch.equal(env.received[-1], want)


def test_int_categories_of_another_dtype_are_cast():
    env = ActionEcho(Categorical(4, shape=(2,)))
    for dtype in (torch.int32, torch.int16, torch.uint8, torch.bool):
        data = _step_with(env, torch.tensor([1, 0], dtype=dtype))
        assert env.received[-1].dtype == torch.int64 and data["action"].dtype == torch.int64
        assert env.received[-1].tolist() == [1, 0]
    env32 = ActionEcho(Categorical(4, shape=(2,), dtype=torch.int32))
    _step_with(env32, torch.tensor([3, 2]))
    assert env32.received[-1].dtype == torch.int32


@pytest.mark.parametrize(
    "spec, bad, why",
    [
        (OneHot(3, shape=(2, 3)), torch.tensor([[0, 2, 0], [1, 0, 0]]), "cast to torch.bool"),
        (OneHot(3, shape=(2, 3)), torch.tensor([[0.5, 0.5, 0.0], [1, 0, 0]]), "cast"),
        (OneHot(3, shape=(2, 3)), torch.tensor([[0, 0, 0], [1, 0, 0]]), "exactly one 1"),
        (OneHot(3, shape=(2, 3)), torch.tensor([[1, -1, 1], [1, 0, 0]]), "cast"),
        (Categorical(4, shape=(2,)), torch.tensor([1.0, 0.0]), "integer categories"),
        (Categorical(4, shape=(2,)), torch.tensor([7, 0], dtype=torch.int32), r"outside \[0, 4\)"),
        (Categorical(4, shape=(2,), dtype=torch.int32), torch.tensor([2**32 + 1, 0]), "cast"),
        (Bounded(-1.0, 1.0, shape=(2, 1)), torch.zeros(2, 1, dtype=torch.float64), "not cast"),
    ],
)
def test_wrong_values_in_another_encoding_still_raise(spec, bad, why):
    env = ActionEcho(spec)
    with pytest.raises(SpecMismatchError, match=why):
        _step_with(env, bad)
    assert env.received == []


def test_parallel_parent_casts_before_sending():
    from functools import partial

    env = hub.ParallelEnv(2, partial(ActionEcho, OneHot(3, shape=(3,)), ()))
    try:
        td = env.reset()
        td.set("action", torch.tensor([[0, 0, 1], [1, 0, 0]]))
        data = env.step(td)
        assert data["next", "observation"].tolist() == [[0, 0, 1], [1, 0, 0]]
        td.set("action", torch.tensor([[0, 0, 0], [1, 0, 0]], dtype=torch.bool))
        with pytest.raises(SpecMismatchError, match="exactly one 1"):
            env.step(td)
        td.set("action", torch.tensor([[0, 1, 0], [1, 0, 0]], dtype=torch.bool))
        assert env.step(td)["next", "observation"].tolist() == [[0, 1, 0], [1, 0, 0]]
    finally:
        env.close()


# ------------------------------------------------------------------ continuous: NaN policy
@pytest.mark.parametrize("spec", [Bounded(-1.0, 1.0, shape=(2, 1)), Unbounded((2, 1))])
def test_nan_continuous_actions_pass_without_checks_and_raise_with_them(spec):
    nan = torch.tensor([[float("nan")], [0.0]])
    env = ActionEcho(spec)
    data = _step_with(env, nan)  # documented: with checks off, the backend gets what came
    assert data["next", "observation"].isnan().any()
    checked = ActionEcho(spec, checks=True)
    for value in (nan, torch.tensor([[float("inf")], [0.0]])):
        with pytest.raises(SpecMismatchError, match="NaN or infinite"):
            _step_with(checked, value)
    assert checked.received == []
