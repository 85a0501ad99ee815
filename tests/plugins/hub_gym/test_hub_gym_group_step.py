"""A SerialEnv of single gym envs steps them all in one function (``hub_gym.group``): the
same data as each env's own step and as the raw library's envs, across episode ends, and the
envs it does not serve step through their own hooks."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import hub
from tests.plugins.hub_gym.gym_helpers import backend_params, raw_make_kwargs, version


@pytest.fixture(params=backend_params())
def backend(request):
    return request.param


def _rollout(env, steps, seed=0):
    torch.manual_seed(seed)
    return env.rollout(steps, break_when_any_done=False)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "steps"),
    [
        ("CartPole-v1", {}, 120),
        ("CartPole-v1", {"categorical_action_encoding": True}, 120),
        ("Pendulum-v1", {}, 210),  # its time limit: 200 steps (gym 0.21 takes no other)
        ("MountainCarContinuous-v0", {}, 1005),  # 999 steps
    ],
)
def test_the_group_step_gives_each_env_s_own_data(backend, env_id, kwargs, steps):
    uri = f"{backend}:{env_id}"
    grouped = hub.make_env(uri, num_envs=3, batching="serial", seed=7, **kwargs)
    assert hub.EnvBase.group_stepper(grouped.envs) is not None
    # a timeout makes a SerialEnv step each sub-env through its own hook
    one_by_one = hub.make_env(uri, num_envs=3, batching="serial", seed=7, timeout=600, **kwargs)
    a, b = _rollout(grouped, steps), _rollout(one_by_one, steps)
    assert int(a["next", "done"].sum()) > 0  # episodes ended and were reset in the group step
    assert (a == b).all()
    for key in a.keys(include_nested=True, leaves_only=True):
        assert a[key].dtype == b[key].dtype, key


def test_a_group_of_gym_envs_steps_as_the_raw_envs(backend):
    if version(backend).release < (0, 26):
        pytest.skip("the raw loop below uses the five-value step of gym >= 0.26")
    lib = importlib.import_module(backend)
    env = hub.make_env(f"{backend}:CartPole-v1", num_envs=4, batching="serial", seed=3)
    raw = [lib.make("CartPole-v1", **raw_make_kwargs(backend)) for _ in range(4)]
    obs = np.stack([e.reset(seed=3 + i)[0] for i, e in enumerate(raw)])
    td = env.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(150):
        actions = rng.integers(0, 2, size=4)
        assert np.array_equal(td["observation"].numpy(), obs)
        td["action"] = torch.from_numpy(np.eye(2, dtype=bool)[actions])
        data, td = env.step_and_maybe_reset(td)
        steps = [e.step(int(a)) for e, a in zip(raw, actions)]
        nxt = np.stack([s[0] for s in steps])
        assert np.array_equal(data["next", "observation"].numpy(), nxt)
        assert data["next", "reward"].flatten().tolist() == [float(s[1]) for s in steps]
        assert data["next", "terminated"].flatten().tolist() == [bool(s[2]) for s in steps]
        assert data["next", "truncated"].flatten().tolist() == [bool(s[3]) for s in steps]
        for i, s in enumerate(steps):
            if s[2] or s[3]:
                nxt[i] = raw[i].reset()[0]  # the env's own generator continues
                ends += 1
        obs = nxt
    assert ends > 0


def test_envs_the_group_step_does_not_serve_step_through_their_own_hooks(backend):
    from hub_gym import GymEnv

    def make(**kwargs):
        with hub.set_gym_backend(backend):
            return GymEnv("CartPole-v1", **kwargs)

    class Subclass(GymEnv):
        def _step_arrays(self, inputs, rows=None):
            return super()._step_arrays(inputs, rows)

    with hub.set_gym_backend(backend):
        mixed = [make(), Subclass("CartPole-v1")]
        overriding = [Subclass("CartPole-v1"), Subclass("CartPole-v1")]
        vector = [GymEnv("CartPole-v1", num_envs=2), GymEnv("CartPole-v1", num_envs=2)]
        discrete_obs = [GymEnv("FrozenLake-v1"), GymEnv("FrozenLake-v1")]
    assert hub.EnvBase.group_stepper([make(), make()]) is not None
    for envs in (
        [make(frame_skip=2), make(frame_skip=2)],
        mixed,
        overriding,
        vector,
        discrete_obs,
    ):
        assert hub.EnvBase.group_stepper(envs) is None, envs
    closed = [make(), make()]
    closed[1].close()
    assert hub.EnvBase.group_stepper(closed) is None

    # a SerialEnv of them gives the same data either way (frame skipping: rewards of 2)
    env = hub.make_env(f"{backend}:CartPole-v1", num_envs=2, batching="serial", frame_skip=2)
    data = _rollout(env, 30)
    assert set(data["next", "reward"].flatten().tolist()) <= {1.0, 2.0}


def test_info_readers_added_after_the_group_step_was_built_take_each_env_s_step(backend):
    from hub_gym import GymEnv

    with hub.set_gym_backend(backend):
        envs = [GymEnv("CartPole-v1"), GymEnv("CartPole-v1")]
    for env in envs:
        env.reset()
    run = hub.EnvBase.group_stepper(envs)
    actions = {"action": np.eye(2, dtype=bool)[[0, 1]]}
    assert run(actions, True) is not None
    seen = []
    envs[1].set_info_dict_reader(lambda info, out: seen.append(info))
    assert run(actions, True) is None  # declined before stepping: the reader would be skipped
    assert seen == []


def test_an_error_in_one_env_of_the_group_leaves_the_batch_to_reset(backend):
    lib = importlib.import_module(backend)
    from hub_gym import GymWrapper

    class Breaks(lib.Wrapper):
        def __init__(self, env, at):
            super().__init__(env)
            self.at, self.steps = at, 0

        def step(self, action):
            self.steps += 1
            if self.steps == self.at:
                raise RuntimeError("sub-env 1 broke")
            return self.env.step(action)

    def factory(at):
        return GymWrapper(Breaks(lib.make("CartPole-v1", **raw_make_kwargs(backend)), at))

    env = hub.SerialEnv(3, [lambda: factory(10**9), lambda: factory(3), lambda: factory(10**9)])
    assert hub.EnvBase.group_stepper(env.envs) is not None
    td = env.reset()
    td["action"] = torch.from_numpy(np.eye(2, dtype=bool)[[0, 1, 0]])
    env.step(td)
    env.step(td)
    with pytest.raises(RuntimeError, match="sub-env 1 broke"):
        env.step(td)
    with pytest.raises(hub.errors.HubError, match="did not complete"):
        env.step(td)
    td = env.reset()
    td["action"] = torch.from_numpy(np.eye(2, dtype=bool)[[0, 1, 0]])
    assert env.step(td)["next", "observation"].shape == (3, 4)
