"""The transform engine: transforms of observations and actions, parents, clones, Compose
indexing, spec order, inverse order, spec refresh, errors."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import hub
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.errors import HubError
from hub.specs import Bounded, Unbounded
from hub.transforms import (
    Compose,
    DoubleToFloat,
    DTypeCastTransform,
    RewardSum,
    StepCounter,
    Transform,
    TransformedEnv,
)


class AddOneToObs(Transform):
    """A transform that adds 1 to the observation tensor on the way out."""

    def __init__(self):
        super().__init__(in_keys=["observation"], out_keys=["observation"])

    def _apply_transform(self, obs: torch.Tensor) -> torch.Tensor:
        return obs + 1


class AddOneToAction(Transform):
    """A transform that adds 1 to the action tensor on the way in."""

    def __init__(self):
        super().__init__(in_keys=[], out_keys=[], in_keys_inv=["action"], out_keys_inv=["action"])

    def _inv_apply_transform(self, action: torch.Tensor) -> torch.Tensor:
        return action + 1


class Buffered(Transform):
    """A transform with a tensor buffer, to check that clones share it."""

    def __init__(self, value: float = 0.0):
        super().__init__(in_keys=["observation"], out_keys=["observation"])
        self.offset = torch.tensor([value])

    def _apply_transform(self, obs):
        return obs + self.offset


class Recorder(Transform):
    """Records the order of its spec and inverse calls in a shared list."""

    def __init__(self, name: str, log: list):
        super().__init__()
        self.name = name
        self.log = log

    def transform_output_spec(self, output_spec):
        self.log.append(("spec", self.name))
        return output_spec

    def _inv_call(self, tensordict):
        self.log.append(("inv", self.name))
        return tensordict

    def _step(self, tensordict, next_tensordict):
        self.log.append(("step", self.name))
        return next_tensordict


def pendulum() -> PendulumEnv:
    env = PendulumEnv()
    env.set_seed(0)
    return env


# ---------------------------------------------------------------- adding one


def test_add_one_to_obs_adds_one_to_every_observation():
    base = pendulum()
    env = TransformedEnv(pendulum(), AddOneToObs())
    base.set_seed(1)
    env.set_seed(1)
    raw = base.reset()
    seen = env.reset()
    torch.testing.assert_close(seen["observation"], raw["observation"] + 1)
    action = TensorDict({"action": torch.zeros(1)}, [])
    raw_next = base.step(raw.update(action))["next", "observation"]
    seen_next = env.step(seen.update(action))["next", "observation"]
    torch.testing.assert_close(seen_next, raw_next + 1)


def test_compose_add_one_and_reward_sum():
    env = TransformedEnv(pendulum(), Compose(AddOneToObs(), RewardSum()))
    data = env.rollout(5)
    sums = data["next", "episode_reward"]
    torch.testing.assert_close(sums, data["next", "reward"].cumsum(0))
    hub.check_env_specs(env)


def test_add_one_to_action_reaches_the_base_env_plus_one():
    seen = []

    class Spy(CountingEnv):
        def _step(self, tensordict):
            seen.append(tensordict["action"].clone())
            return super()._step(tensordict)

    base = Spy()
    base.action_spec  # noqa: B018 - specs built
    env = TransformedEnv(base, AddOneToAction())
    td = env.reset()
    td["action"] = torch.zeros(1, dtype=torch.int64)
    out = env.step(td)
    assert seen[-1].tolist() == [1]
    assert out["action"].tolist() == [0]  # the policy's data is left as it was
    assert out["next", "reward"].tolist() == [1.0]


def test_double_to_float_on_actions_maps_float32_to_float64_before_the_base_env():
    seen = []

    class Spy(PendulumEnv):
        def _step(self, tensordict):
            seen.append(tensordict["action"].dtype)
            return super()._step(tensordict)

    inner = TransformedEnv(Spy(), DTypeCastTransform(torch.float32, torch.float64))
    assert inner.action_spec.dtype == torch.float64
    env = inner.append_transform(DoubleToFloat(in_keys_inv=["action"]))
    assert env is inner
    assert env.action_spec.dtype == torch.float32
    env.rollout(2)
    assert seen == [torch.float32, torch.float32]  # the base env still gets float32 after both
    td = env.reset()
    td["action"] = torch.zeros(1, dtype=torch.float32)
    env.step(td)
    assert td["action"].dtype == torch.float32


def test_parent_is_the_env_up_to_the_transform():
    base = pendulum()
    env = TransformedEnv(base, Compose(AddOneToObs(), RewardSum(), StepCounter()))
    parent = env.transform[-1].parent
    assert isinstance(parent, TransformedEnv)
    assert parent.base_env is base
    assert [type(t) for t in parent.transform] == [AddOneToObs, RewardSum]
    same = TransformedEnv(base, env.transform[:-1])
    assert parent.output_spec == same.output_spec
    assert parent.input_spec == same.input_spec
    first_parent = env.transform[0].parent
    assert len(first_parent.transform) == 0
    assert first_parent.observation_spec == base.observation_spec


def test_a_single_transform_has_a_parent_too():
    base = pendulum()
    t = AddOneToObs()
    env = TransformedEnv(base, t)
    assert env.transform is t
    assert t.parent.base_env is base
    assert len(t.parent.transform) == 0


def test_a_transform_with_a_parent_is_refused_by_a_second_env():
    base = CountingEnv()
    env = TransformedEnv(base, Compose(AddOneToObs(), RewardSum(), StepCounter()))
    third = env.transform[2]
    assert third.parent is not None
    with pytest.raises(HubError, match="clone"):
        TransformedEnv(base, third)
    other = TransformedEnv(base, third.clone())
    assert other.transform.parent is not None
    assert other.rollout(2)["next", "step_count"].squeeze(-1).tolist() == [1, 2]


def test_compose_slicing_gives_clones_without_parent():
    base = CountingEnv()
    t1, t2, t3 = AddOneToObs(), Buffered(1.0), Buffered(2.0)
    env = TransformedEnv(base, Compose(t1, t2, t3))
    last_two = env.transform[-2:]
    assert isinstance(last_two, Compose)
    assert last_two.parent is None
    assert last_two[0] is not t2 and isinstance(last_two[0], type(t2))
    assert last_two[1] is not t3 and isinstance(last_two[1], type(t3))
    assert last_two[0].offset is t2.offset  # the buffers are shared
    assert env.transform[1] is t2 and t2.parent is not None
    assert env.transform[[0, 2]][1].offset is t3.offset


def test_clone_drops_the_parent_and_shares_buffers():
    t = Buffered(3.0)
    env = TransformedEnv(CountingEnv(), t)
    clone = t.clone()
    assert clone.parent is None and t.parent.base_env is env.base_env
    assert clone.offset is t.offset
    clone.in_keys = ["other"]
    assert t.in_keys == ["observation"]


# ---------------------------------------------------------------- order and specs


def test_specs_transform_inner_to_outer_and_inverse_runs_outer_to_inner():
    log: list = []
    env = TransformedEnv(CountingEnv(), Compose(Recorder("a", log), Recorder("b", log)))
    assert [name for kind, name in log if kind == "spec"][-2:] == ["a", "b"]
    log.clear()
    env.rollout(1)
    assert [entry for entry in log if entry[0] == "inv"] == [("inv", "b"), ("inv", "a")]
    assert [entry for entry in log if entry[0] == "step"] == [("step", "a"), ("step", "b")]


def test_specs_follow_changes_of_the_base_env():
    base = CountingEnv()
    env = TransformedEnv(base, StepCounter())
    base.observation_spec = base.observation_spec.clone().set("extra", Unbounded((1,)))
    assert "extra" in env.observation_spec.keys()
    assert "step_count" in env.observation_spec.keys()


def test_specs_follow_appended_and_inserted_transforms():
    env = TransformedEnv(CountingEnv())
    assert "step_count" not in env.observation_keys
    env.append_transform(StepCounter())
    assert "step_count" in env.observation_keys
    env.insert_transform(0, RewardSum())
    assert [type(t) for t in env.transform] == [RewardSum, StepCounter]
    assert "episode_reward" in env.observation_keys
    env.transform.pop(0)
    assert "episode_reward" not in env.observation_keys


def test_append_transform_on_a_plain_env_returns_a_transformed_env():
    base = CountingEnv()
    env = base.append_transform(StepCounter())
    assert isinstance(env, TransformedEnv) and env.base_env is base
    single = TransformedEnv(CountingEnv(), StepCounter())
    single.append_transform(RewardSum())
    assert isinstance(single.transform, Compose) and len(single.transform) == 2
    assert single.transform[0].parent is not None


def test_out_keys_get_the_in_keys_spec_by_default():
    class Copy(Transform):
        def __init__(self):
            super().__init__(in_keys=["observation"], out_keys=["copy"])

        def _apply_transform(self, value):
            return value.clone()

    env = TransformedEnv(CountingEnv(), Copy())
    assert env.observation_spec["copy"] == env.observation_spec["observation"]
    hub.check_env_specs(env)


def test_undeclared_spec_change_is_caught_by_check_env_specs():
    class Halve(Transform):
        def __init__(self):
            super().__init__(in_keys=["observation"])

        def _apply_transform(self, value):
            return value / 2  # int64 -> float, spec not updated

    env = TransformedEnv(CountingEnv(), Halve())
    with pytest.raises(hub.errors.SpecMismatchError, match="observation"):
        hub.check_env_specs(env)


def test_checks_on_the_transformed_env_check_the_transformed_outputs():
    env = TransformedEnv(CountingEnv(max_steps=3), AddOneToObs(), checks=True)
    with pytest.raises(hub.errors.SpecMismatchError, match="observation"):
        env.rollout(5)


# ---------------------------------------------------------------- errors


def test_missing_in_key_names_the_key():
    class Needs(Transform):
        def __init__(self):
            super().__init__(in_keys=["nope"])

        def _apply_transform(self, value):
            return value

    env = TransformedEnv(CountingEnv(), Needs())
    env.reset()
    with pytest.raises(KeyError, match="nope"):
        env.rand_step(env.reset())


def test_setting_specs_on_a_transformed_env_says_where_to_set_them():
    env = TransformedEnv(CountingEnv(), StepCounter())
    with pytest.raises(HubError, match="base_env"):
        env.observation_spec = env.observation_spec.clone()


def test_wrong_types_are_refused():
    with pytest.raises(TypeError, match="EnvBase"):
        TransformedEnv(object(), StepCounter())
    with pytest.raises(TypeError, match="Transform"):
        TransformedEnv(CountingEnv(), lambda td: td)
    with pytest.raises(TypeError, match="Transform"):
        Compose(StepCounter(), "x")
    with pytest.raises(ValueError, match="out_key"):
        Transform(in_keys=["a", "b"], out_keys=["c"])


# ---------------------------------------------------------------- env behaviour


def test_attributes_are_read_from_the_base_env():
    env = TransformedEnv(CountingEnv(max_steps=7), StepCounter())
    assert env.max_steps == 7
    with pytest.raises(AttributeError):
        env.no_such_attribute  # noqa: B018


def test_set_seed_and_close_reach_the_base_env():
    base = PendulumEnv()
    env = TransformedEnv(base, StepCounter())
    assert env.set_seed(3) == base.set_seed(3)
    env.set_seed(3)
    a = env.reset()["observation"]
    env.set_seed(3)
    b = env.reset()["observation"]
    torch.testing.assert_close(a, b)
    env.close()
    assert base.is_closed and env.is_closed


def test_closing_a_parent_view_leaves_the_base_env_open():
    base = CountingEnv()
    env = TransformedEnv(base, Compose(StepCounter(), RewardSum()))
    env.transform[1].parent.close()
    assert not base.is_closed


def test_make_env_with_transforms():
    env = hub.make_env("hub:Counting", transforms=[StepCounter(2), RewardSum()])
    assert isinstance(env, TransformedEnv)
    data = env.rollout(5)
    assert data["next", "step_count"].squeeze(-1).tolist() == [1, 2]
    hub.check_env_specs(env)
    single = hub.make_env("hub:Counting", transforms=StepCounter())
    assert isinstance(single.transform, StepCounter)


def test_batch_unlocked_base_env_accepts_any_batch_size():
    env = TransformedEnv(PendulumEnv(), Compose(StepCounter(), RewardSum(), DoubleToFloat()))
    assert not env.batch_locked
    td = env.reset(TensorDict({}, [4]))
    out = env.rand_step(td)
    assert out["next", "step_count"].shape == (4, 1)
    assert out["next", "episode_reward"].shape == (4, 1)


def test_nested_transformed_envs():
    inner = TransformedEnv(CountingEnv(), StepCounter())
    outer = TransformedEnv(inner, RewardSum())
    data = outer.rollout(3)
    assert data["next", "step_count"].squeeze(-1).tolist() == [1, 2, 3]
    hub.check_env_specs(outer)


def test_bounded_spec_kept_by_identity_transforms():
    env = TransformedEnv(CountingEnv(max_steps=4), Compose())
    assert isinstance(env.observation_spec["observation"], Bounded)
    assert env.observation_spec == env.base_env.observation_spec
