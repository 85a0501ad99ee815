"""RayEnv's env contract on a local Ray instance: the same data as SerialEnv for the same seed,
partial resets, step_and_maybe_reset, transforms, the async calls, attributes, make_env."""

from __future__ import annotations

import functools
import json

import pytest
import torch
from hub_ray import RayEnv

import hub
from hub.batching import AsyncCallError
from hub.errors import WorkerError, WorkerTimeoutError
from hub.registry import batching_strategies

from .ray_helpers import SlowCountingEnv, same_data, start_local_ray

pytest.importorskip("gymnasium")


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    yield from start_local_ray()


@pytest.fixture(scope="module")
def cartpole():
    env = hub.make_env(
        "gymnasium:CartPole-v1",
        num_envs=5,
        batching="ray",
        envs_per_actor=3,  # actors of 3 and 2 envs
        actor_batching="serial",  # SerialEnvs in the actors: the same seeds as SerialEnv
        actor_options={"num_cpus": 0},
    )
    yield env
    env.close()


@pytest.fixture(scope="module")
def serial_cartpole():
    env = hub.make_env("gymnasium:CartPole-v1", num_envs=5, batching="serial")
    yield env
    env.close()


@pytest.fixture(scope="module")
def counting():
    env = RayEnv(functools.partial(SlowCountingEnv, delay=0.0, max_steps=4), 4, envs_per_actor=2)
    yield env
    env.close()


@pytest.fixture(scope="module")
def serial_counting():
    env = hub.SerialEnv(4, functools.partial(SlowCountingEnv, delay=0.0, max_steps=4))
    yield env
    env.close()


def test_batch_size_specs_and_actors(cartpole, serial_cartpole):
    assert "ray" in batching_strategies()
    assert isinstance(cartpole, RayEnv)
    assert cartpole.batch_size == torch.Size([5])
    assert cartpole.envs_per_actor == [3, 2]
    assert cartpole.num_actors == 2
    for name in ("full_observation_spec", "full_action_spec", "full_reward_spec", "full_done_spec"):
        assert getattr(cartpole, name) == getattr(serial_cartpole, name), name
    hub.check_env_specs(cartpole)


def test_rollout_equals_serial_across_episode_ends(cartpole, serial_cartpole):
    data = []
    for env in (cartpole, serial_cartpole):
        env.set_seed(7)
        torch.manual_seed(0)
        data.append(env.rollout(60, break_when_any_done=False))
    assert data[0]["next", "done"].any()  # episodes ended and were reset on the way
    assert same_data(data[0], data[1])


def test_step_and_maybe_reset_loop_equals_serial(cartpole, serial_cartpole):
    outs = []
    for env in (cartpole, serial_cartpole):
        assert env.set_seed(3) is not None
        torch.manual_seed(1)
        td = env.reset()
        steps = []
        for _ in range(40):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
            steps.append(data.clone())
        outs.append((torch.stack(steps), td))
    assert outs[0][0]["next", "done"].any()
    assert same_data(outs[0][0], outs[1][0])
    assert same_data(outs[0][1], outs[1][1])


def test_seeds_chain_like_serial(cartpole, serial_cartpole):
    assert cartpole.set_seed(11) == serial_cartpole.set_seed(11)
    first = cartpole.reset()["observation"]
    assert len({tuple(row.tolist()) for row in first}) == 5  # distinct seeds per env


def test_partial_reset_reaches_only_marked_envs(cartpole, serial_cartpole):
    results = []
    for env in (cartpole, serial_cartpole):
        env.set_seed(5)
        torch.manual_seed(2)
        td = env.reset()
        td = env.step_mdp(env.step(env.rand_action(td)))
        before = td["observation"].clone()
        td["_reset"] = torch.tensor([False, False, True, False, True]).unsqueeze(-1)
        out = env.reset(td)
        results.append(out)
        assert torch.equal(out["observation"][[0, 1, 3]], before[[0, 1, 3]])
        assert not torch.equal(out["observation"][[2, 4]], before[[2, 4]])
        assert "_reset" not in out.keys()
    assert same_data(results[0], results[1])


def test_partial_step_steps_only_marked_envs(cartpole, serial_cartpole):
    results = []
    for env in (cartpole, serial_cartpole):
        env.set_seed(9)
        torch.manual_seed(3)
        td = env.rand_action(env.reset())
        td["_step"] = torch.tensor([True, False, False, True, False])
        results.append(env.step(td)["next"].clone())
    assert same_data(results[0], results[1])


def test_transforms_apply_on_top(counting, serial_counting):
    data = []
    for env in (counting, serial_counting):
        transformed = hub.TransformedEnv(env, hub.transforms.RewardSum())
        torch.manual_seed(4)
        data.append(transformed.rollout(6, break_when_any_done=False))
    assert data[0]["next", "episode_reward"].max() > 0
    assert same_data(data[0], data[1])


def test_async_step_and_reset(counting):
    counting.reset_send()
    td = counting.reset_fetch(timeout=60)
    assert td["observation"].squeeze(-1).tolist() == [0, 0, 0, 0]
    td["action"] = torch.ones(4, 1, dtype=torch.int64)
    counting.step_send(td)
    with pytest.raises(AsyncCallError, match="step_fetch"):
        counting.step(td)
    with pytest.raises(AsyncCallError, match="reset_fetch"):
        counting.reset_fetch()
    out = counting.step_fetch(timeout=60)
    assert out["next", "observation"].squeeze(-1).tolist() == [1, 1, 1, 1]
    with pytest.raises(AsyncCallError, match="step_send"):
        counting.step_fetch()


def test_async_partial_reset(counting):
    td = counting.reset()
    td["action"] = torch.ones(4, 1, dtype=torch.int64)
    td = counting.step_mdp(counting.step(td))
    td["_reset"] = torch.tensor([[False], [False], [True], [False]])
    counting.reset_send(td)
    out = counting.reset_fetch(timeout=60)
    assert out["observation"].squeeze(-1).tolist() == [1, 1, 0, 1]


def test_fetch_timeout_keeps_the_step_pending(counting):
    td = counting.reset()
    counting.set_attr("delay", 2.0)
    try:
        counting.step_send(counting.rand_action(td))
        with pytest.raises(WorkerTimeoutError, match="still pending"):
            counting.step_fetch(timeout=0.01)
        with pytest.raises(AsyncCallError, match="step_fetch"):
            counting.reset()
        out = counting.step_fetch(timeout=60)
        assert out["next", "observation"].shape == (4, 1)
        counting.timeout = 0.01  # a synchronous step_and_maybe_reset that times out
        with pytest.raises(WorkerTimeoutError, match="step_fetch"):
            counting.step_and_maybe_reset(counting.rand_action(counting.step_mdp(out)))
        counting.timeout = None
        data, next_input = counting.step_fetch(timeout=60)
        assert data["next", "observation"].shape == next_input["observation"].shape == (4, 1)
    finally:
        counting.timeout = None
        counting.set_attr("delay", 0.0)


def test_attributes_calls_and_set_attr(counting, serial_counting):
    assert counting.max_steps == [4, 4, 4, 4]  # forwarded: one value per env
    counting.set_attr("max_steps", [5, 6, 7, 8])
    assert counting.get_attr("max_steps") == [5, 6, 7, 8]
    counting.set_attr("max_steps", 4)
    assert counting.get_attr("max_steps") == [4, 4, 4, 4]
    assert counting.get_attr("set_seed") == ["<method>"] * 4
    assert counting.call("set_seed", 0) == serial_counting.call("set_seed", 0)
    with pytest.raises(AttributeError, match="no_such_attribute"):
        counting.no_such_attribute  # noqa: B018


def test_call_at_calls_the_envs_of_indices_only(counting):
    counting.call_at([3, 0], "__setattr__", "tag", 7)
    try:
        assert counting.call_at([3, 0], "__getattribute__", "tag") == [7, 7]
        with pytest.raises(AttributeError, match="tag"):
            counting.call_at([1], "__getattribute__", "tag")
        with pytest.raises(IndexError, match="sub-env 4 of 4"):
            counting.call_at([4], "set_seed", 1)
        sb3 = hub.to_sb3(counting)
        assert sb3.env_method("__getattribute__", "tag", indices=[0]) == [7]
    finally:
        counting.call_at([3, 0], "__delattr__", "tag")


def test_a_natively_batched_actor_env_answers_once_per_env():
    """As a ``ParallelEnv`` worker: one value per env, whatever holds them."""
    env = hub.make_env("hub:Pendulum", num_envs=4, batching="ray", envs_per_actor=2)
    try:
        assert env.get_attr("max_speed") == [8.0] * 4
        env.set_attr("max_speed", 9.0)
        assert env.call("__getattribute__", "max_speed") == [9.0] * 4
        with pytest.raises(WorkerError, match="one value for all of them"):
            env.set_attr("max_speed", [1.0, 2.0, 3.0, 4.0])
        with pytest.raises(WorkerError, match="envs_per_worker=1"):
            env.call_at([1], "set_seed", 1)
    finally:
        env.close()


def test_native_batching_per_actor_with_envpool():
    pytest.importorskip("envpool")
    env = hub.make_env("envpool:CartPole-v1", num_envs=6, batching="ray", envs_per_actor=3, seed=1)
    try:
        assert env.envs_per_actor == [3, 3]
        data = env.rollout(50, break_when_any_done=False)
        assert data.batch_size == torch.Size([6, 50])
        assert data["next", "done"].any()
        hub.check_env_specs(env)
    finally:
        env.close()


def test_cli_lists_the_plugin_and_rolls_out_with_batching_ray():
    from click.testing import CliRunner

    from hub.cli import cli

    runner = CliRunner()
    plugins = json.loads(runner.invoke(cli, ["plugins", "--json"]).stdout)
    assert any(p["name"] == "ray" and p["error"] is None for p in plugins)
    args = ["rollout", "gymnasium:CartPole-v1", "--num-envs", "8", "--batching", "ray"]
    result = runner.invoke(cli, [*args, "--steps", "50", "--json", "-k", "envs_per_actor=4"])
    assert result.exit_code == 0, (result.output, result.exception)
    summary = json.loads(result.stdout)
    assert summary["num_envs"] == 8 and summary["env_steps"] >= 50


@pytest.mark.parametrize("envs_per_actor", [1, 2])
def test_text_observations_equal_serial_and_stay_strings(envs_per_actor: int):
    from tests.export.text_env import make_text

    want = hub.SerialEnv(4, make_text)
    want.set_seed(0)
    want = want.rollout(6, break_when_any_done=False)
    env = RayEnv(make_text, 4, envs_per_actor=envs_per_actor, actor_options={"num_cpus": 0})
    try:
        env.set_seed(0)
        have = env.rollout(6, break_when_any_done=False)
    finally:
        env.close()
    for key in ("mission", ("next", "mission")):
        assert have.get(key).tolist() == want.get(key).tolist(), key
        assert {type(v) for row in have.get(key).tolist() for v in row} == {str}


def test_attributes_of_some_envs_only_through_sb3():
    from hub.envs.builtin import CountingEnv

    venv = hub.to_sb3(RayEnv(CountingEnv, 3, envs_per_actor=2, actor_options={"num_cpus": 0}))
    try:
        venv.set_attr("x", 7, indices=[1])  # in the first actor, beside env 0
        assert venv.get_attr("x", indices=[1]) == [7]
        with pytest.raises(AttributeError, match="x"):
            venv.get_attr("x", indices=[0])
        venv.set_attr("x", 5, indices=[2, 0])
        assert venv.get_attr("x") == [5, 7, 5]
        assert venv.env_method("__getattribute__", "x", indices=[2, 1]) == [5, 7]
    finally:
        venv.close()
