"""DMControlEnv and DMControlWrapper against the real dm_control suite."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from tests.plugins.hub_dm_control.dmc_helpers import (
    ACCEPTANCE_TASKS,
    make,
    needs_dmc,
    seeded_rollout,
)

pytestmark = needs_dmc


# ---------------------------------------------------------------------- acceptance (issue 8)
@pytest.mark.parametrize("task", ACCEPTANCE_TASKS)
def test_acceptance_task(task: str) -> None:
    """check_env_specs passes, the same seed gives the same rollout, another seed another."""
    env = make(task, seed=0)
    hub.check_env_specs(env)
    env.close()
    first = seeded_rollout(task, 0, 20)
    again = seeded_rollout(task, 0, 20)
    other = seeded_rollout(task, 1, 20)
    assert bool((first == again).all())
    key = env.observation_keys[0]
    assert not torch.equal(first[key], other[key])


@pytest.mark.parametrize("task", ACCEPTANCE_TASKS)
def test_time_limit_is_truncation(task: str) -> None:
    env = make(task, seed=0, task_kwargs={"time_limit": 0.1})
    steps = round(0.1 / env.physics.timestep() / env._env._n_sub_steps)
    data = env.rollout(steps + 5)
    assert data.shape == torch.Size([steps])
    assert data["next", "truncated"][-1].item() and data["next", "done"][-1].item()
    assert not data["next", "terminated"].any()
    assert not data["next", "done"][:-1].any()
    assert data["next", "discount"][-1].item() == 1.0


def test_default_time_limit_truncates_at_step_1000() -> None:
    env = make("cartpole/balance", seed=0)
    data = env.rollout(1005)
    assert data.shape == torch.Size([1000])
    assert data["next", "truncated"][-1].item() and not data["next", "terminated"].any()


def test_time_limit_in_environment_kwargs_is_moved_to_the_task() -> None:
    env = make("cheetah/run", environment_kwargs={"time_limit": 0.05})
    assert env.rollout(10).shape == torch.Size([5])


# ---------------------------------------------------------------------- values against raw
def test_observations_reward_and_discount_match_raw_dm_control() -> None:
    from dm_control import suite

    raw = suite.load("walker", "walk", task_kwargs={"random": 3})
    env = make("walker/walk", seed=3, dtype=None)
    first = raw.reset()
    td = env.reset()
    for key, value in first.observation.items():
        np.testing.assert_array_equal(td[key].numpy(), np.asarray(value).reshape(td[key].shape))
    actions = np.random.default_rng(0).uniform(-1, 1, size=(5, 6))
    for action in actions:
        ts = raw.step(action)
        td["action"] = torch.as_tensor(action)
        out = env.step(td)["next"]
        assert out["reward"].item() == ts.reward and out["discount"].item() == ts.discount
        for key, value in ts.observation.items():
            np.testing.assert_array_equal(out[key].numpy(), np.asarray(value).reshape(-1))
        td = env.step_mdp(td)


def test_default_dtype_is_float32_and_none_keeps_float64() -> None:
    env32 = make("cheetah/run")
    assert {env32.observation_spec[k].dtype for k in env32.observation_keys} == {torch.float32}
    assert env32.action_spec.dtype == env32.reward_spec.dtype == torch.float32
    env64 = make("cheetah/run", dtype=None)
    assert {env64.observation_spec[k].dtype for k in env64.observation_keys} == {torch.float64}
    assert env64.action_spec.dtype == env64.reward_spec.dtype == torch.float64
    hub.check_env_specs(env64)


def test_frame_skip_sums_rewards_over_repeated_actions() -> None:
    from dm_control import suite

    raw = suite.load("cheetah", "run", task_kwargs={"random": 0})
    env = make("cheetah/run", seed=0, frame_skip=3, dtype=None)
    raw.reset()
    td = env.reset()
    action = np.full(6, 0.5)
    expected = sum(raw.step(action).reward for _ in range(3))
    td["action"] = torch.as_tensor(action)
    out = env.step(td)["next"]
    assert out["reward"].item() == pytest.approx(expected, rel=1e-12)
    np.testing.assert_array_equal(out["position"].numpy(), raw.physics.data.qpos[1:])


def test_frame_skip_stops_at_the_end_of_the_episode() -> None:
    env = make("cheetah/run", frame_skip=4, task_kwargs={"time_limit": 0.1})  # 10 raw steps
    data = env.rollout(10)
    assert data.shape == torch.Size([3])  # 4 + 4 + 2 raw steps
    assert data["next", "truncated"].squeeze(-1).tolist() == [False, False, True]


def test_discount_is_an_observation_entry_and_can_be_left_out() -> None:
    env = make("cartpole/balance")
    assert env.observation_keys[-1] == "discount"
    assert env.reset()["discount"].item() == 1.0
    assert "discount" not in make("cartpole/balance", include_discount=False).observation_keys


def test_flat_observation() -> None:
    env = make("cheetah/run", environment_kwargs={"flat_observation": True})
    assert env.observation_spec["observations"].shape == torch.Size([17])
    hub.check_env_specs(env)


# ---------------------------------------------------------------------- seeding
def test_set_seed_equals_seeding_at_construction() -> None:
    from hub_dm_control import DMControlEnv

    built = DMControlEnv("humanoid", "stand", seed=7)
    seeded = DMControlEnv("humanoid/stand")
    assert seeded.set_seed(7) != 7  # the next seed, for the next env of a batch
    assert torch.equal(built.reset()["joint_angles"], seeded.reset()["joint_angles"])


def test_episodes_after_a_seed_differ_from_each_other() -> None:
    env = make("cartpole/swingup", seed=0)
    assert not torch.equal(env.reset()["position"], env.reset()["position"])


# ---------------------------------------------------------------------- the wrapper
def test_wrapper_wraps_a_suite_env_and_forwards_attributes() -> None:
    from dm_control import suite
    from hub_dm_control import DMControlWrapper

    env = DMControlWrapper(suite.load("cartpole", "balance", task_kwargs={"random": 1}))
    assert env.physics is env._env.physics
    assert env.task.random is env._env.task.random
    hub.check_env_specs(env)


class _Terminating:
    """A minimal dm_env environment whose episode terminates (discount 0) after 3 steps."""

    def __init__(self) -> None:
        import dm_env

        self._dm_env = dm_env
        self._t = 0

    def reset(self):
        self._t = 0
        return self._dm_env.restart({"t": np.array([0.0])})

    def step(self, action):
        self._t += 1
        obs = {"t": np.array([float(self._t)])}
        if self._t == 3:
            return self._dm_env.termination(reward=1.0, observation=obs)
        return self._dm_env.transition(reward=float(action[0]), observation=obs)

    def observation_spec(self):
        return {"t": self._dm_env.specs.Array((1,), np.float64, name="t")}

    def action_spec(self):
        return self._dm_env.specs.BoundedArray((1,), np.float64, 0.0, 1.0)

    def reward_spec(self):
        return self._dm_env.specs.Array((), np.float64)

    def close(self) -> None:
        pass


def test_discount_zero_at_the_end_is_termination() -> None:
    from hub_dm_control import DMControlWrapper

    env = DMControlWrapper(_Terminating())
    data = env.rollout(10)
    assert data.shape == torch.Size([3])
    assert data["next", "terminated"].squeeze(-1).tolist() == [False, False, True]
    assert not data["next", "truncated"].any()
    assert data["next", "discount"].squeeze(-1).tolist() == [1.0, 1.0, 0.0]


def test_a_discrete_action_spec_gives_one_hot_actions() -> None:
    import dm_env
    from hub_dm_control import DMControlWrapper

    class Discrete(_Terminating):
        def action_spec(self):
            return dm_env.specs.DiscreteArray(3)

        def step(self, action):
            assert int(action) in (0, 1, 2)
            return super().step(np.array([0.0]))

    env = DMControlWrapper(Discrete())
    assert isinstance(env.action_spec, hub.specs.OneHot)
    assert env.rollout(5).shape == torch.Size([3])
    categorical = DMControlWrapper(Discrete(), categorical_action_encoding=True)
    assert isinstance(categorical.action_spec, hub.specs.Categorical)
    hub.check_env_specs(categorical)


def test_nested_observation_dicts_give_nested_entries() -> None:
    import dm_env
    from hub_dm_control import DMControlWrapper

    class Nested(_Terminating):
        def _nest(self, timestep):
            t = timestep.observation["t"]
            return timestep._replace(observation={"t": t, "body": {"height": float(t[0])}})

        def reset(self):
            return self._nest(super().reset())

        def step(self, action):
            return self._nest(super().step(action))

        def observation_spec(self):
            height = dm_env.specs.Array((), np.float64, name="height")
            return {**super().observation_spec(), "body": {"height": height}}

    env = DMControlWrapper(Nested())
    assert ("body", "height") in env.observation_keys
    data = env.rollout(5)
    assert data["next", "body", "height"].squeeze(-1).tolist() == [1.0, 2.0, 3.0]
    hub.check_env_specs(env)


def test_explicit_device() -> None:
    env = make("cartpole/balance", device="cpu")
    assert env.rollout(3)["next", "position"].device == torch.device("cpu")
    hub.check_env_specs(env)


def test_stepping_past_the_end_is_an_error() -> None:
    env = make("cheetah/run", task_kwargs={"time_limit": 0.02})
    td = env.rand_step()
    td = env.rand_step(env.step_mdp(td))
    assert td["next", "done"].item()
    with pytest.raises(hub.errors.HubError, match="ended and the env was not reset"):
        env.rand_step(env.step_mdp(td))


# ---------------------------------------------------------------------- errors, life cycle
def test_unknown_task_suggests_close_ids() -> None:
    with pytest.raises(hub.errors.UnknownEnvError, match="cheetah/run"):
        make("cheetah/runn")


def test_id_without_a_task_is_explained() -> None:
    from hub_dm_control.plugin import make as plugin_make

    with pytest.raises(hub.errors.UnknownEnvError, match="cheetah/run"):
        make("cheetah")  # hub's registry suggests the listed ids
    with pytest.raises(hub.errors.UnknownEnvError, match="domain/task"):
        plugin_make("cheetah")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="pixels_only"):
        make("cheetah/run", pixels_only=True)
    with pytest.raises(ValueError, match="frame_skip"):
        make("cheetah/run", frame_skip=0)
    with pytest.raises(ValueError, match="dtype"):
        make("cheetah/run", dtype=torch.int64)


def test_close_twice_and_use_after_close() -> None:
    env = make("cartpole/balance")
    env.close()
    env.close()
    with pytest.raises(hub.errors.ClosedEnvError):
        env.reset()


def test_checks_on_catch_out_of_bounds_actions() -> None:
    env = make("cartpole/balance", checks=True)
    td = env.reset()
    td["action"] = torch.tensor([3.0])
    with pytest.raises(hub.errors.SpecMismatchError, match="action"):
        env.step(td)
