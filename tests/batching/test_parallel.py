"""ParallelEnv gives what SerialEnv gives: rollouts, partial steps and resets, attributes, async."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import hub
from hub.batching import AsyncCallError
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv, PendulumEnv
from hub.errors import ClosedEnvError, HubError, SpecMismatchError, WorkerError

from .parallel_envs import (
    CartPoleEnv,
    FlakyEnv,
    NanRewardEnv,
    NonTensorStateEnv,
    WideObservationEnv,
)


def _pair(factory, kwargs=None, n=2, **options):
    return hub.SerialEnv(n, factory, kwargs), hub.ParallelEnv(n, factory, kwargs, **options)


def _rollouts(envs, steps, seed=0, **rollout_kwargs):
    out = []
    for env in envs:
        env.set_seed(seed)
        torch.manual_seed(seed)
        out.append(env.rollout(steps, **rollout_kwargs))
    return out


def _loop(env, steps, seed=0):
    """A collector-style loop over step_and_maybe_reset; returns every step's data."""
    env.set_seed(seed)
    torch.manual_seed(seed)
    td = env.reset()
    steps_data = []
    for _ in range(steps):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        steps_data.append(data)
        steps_data.append(td.clone())
    return steps_data


def _assert_same(a, b):
    assert set(a.keys(True, True)) == set(b.keys(True, True))
    for key in a.keys(True, True):
        assert torch.equal(a[key], b[key]), key


CASES = [
    pytest.param(CountingEnv, [{"max_steps": 3}, {"max_steps": 5}], id="counting"),
    pytest.param(PendulumEnv, {"max_steps": 6}, id="pendulum"),
    pytest.param(MultiAgentCountingEnv, {"n_agents": 2, "max_steps": 2}, id="multi-agent"),
]


@pytest.mark.parametrize(("factory", "kwargs"), CASES)
def test_rollouts_match_serial(factory, kwargs):
    serial, parallel = _pair(factory, kwargs)
    with parallel:
        assert parallel.batch_size == serial.batch_size
        assert parallel.output_spec == serial.output_spec
        assert parallel.input_spec == serial.input_spec
        for options in (
            {"break_when_any_done": False},
            {},
            {"break_when_any_done": False, "break_when_all_done": True},
        ):
            a, b = _rollouts([serial, parallel], 9, **options)
            _assert_same(a, b)
        for a, b in zip(_loop(serial, 12), _loop(parallel, 12)):
            _assert_same(a, b)


@pytest.mark.parametrize("spin_wait", [0.0, 0.05], ids=["sleep-at-once", "long-spin"])
def test_spin_wait_changes_only_how_processes_wait(spin_wait):
    """Without spinning every wait sleeps in poll; with a long spin nearly none does: the data
    is the same either way."""
    kwargs = [{"max_steps": 3}, {"max_steps": 5}]
    serial, parallel = _pair(CountingEnv, kwargs, spin_wait=spin_wait)
    with parallel:
        assert parallel._pool.spin_wait == spin_wait
        for a, b in zip(_loop(serial, 12), _loop(parallel, 12)):
            _assert_same(a, b)


def test_negative_spin_wait_is_refused():
    with pytest.raises(ValueError, match="spin_wait"):
        hub.ParallelEnv(2, CountingEnv, spin_wait=-1.0)


def test_cartpole_rollouts_match_serial():
    pytest.importorskip("gymnasium")
    serial, parallel = _pair(CartPoleEnv, n=3)
    with parallel:
        for a, b in zip(_loop(serial, 60, seed=3), _loop(parallel, 60, seed=3)):
            _assert_same(a, b)
        a, b = _rollouts([serial, parallel], 40, seed=5, break_when_any_done=False)
        _assert_same(a, b)


def _gym_plugin_env(**kwargs):
    return hub.make_env("gymnasium:CartPole-v1", **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"frame_skip": 3}], ids=["plain", "frame-skip"])
def test_gym_plugin_rollouts_match_serial(kwargs):
    """The gym plugin writes its step straight into the shared buffers (``_step_into``); the
    data is the same as its ``_step``'s, which SerialEnv uses."""
    pytest.importorskip("gymnasium")
    serial, parallel = _pair(_gym_plugin_env, kwargs, n=3)
    with parallel:
        for a, b in zip(_loop(serial, 80, seed=3), _loop(parallel, 80, seed=3)):
            _assert_same(a, b)
        a, b = _rollouts([serial, parallel], 40, seed=5, break_when_any_done=False)
        _assert_same(a, b)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: CountingEnv(max_steps=2), id="array-hooks"),
        pytest.param(lambda: _gym_plugin_env(), id="gym"),
        pytest.param(lambda: CountingEnv(max_steps=2, checks=True), id="checks"),
    ],
)
def test_step_arrays_gives_what_step_returns(make):
    """What a worker calls (the env's array-level entry point) gives the data of ``step``."""
    if "gym" in str(make):
        pytest.importorskip("gymnasium")
    env_a, env_b = make(), make()
    env_a.set_seed(1)
    env_b.set_seed(1)
    td_a = env_a.reset()
    env_b.reset()
    for _ in range(4):
        action = env_a.rand_action(td_a.clone())
        expected = env_a.step(action.clone())["next"]
        out = env_b.step_arrays({"action": action["action"].numpy()})
        built = env_b.env_keys.outputs.build(out)[0]
        for key in expected.keys(True, True):
            assert torch.equal(built[key], expected[key]), key
        if bool(expected["done"].any()):
            td_a = env_a.reset()
            env_b.reset()
        else:
            td_a = env_a.step_mdp(action.set("next", expected))


def test_a_worker_refuses_an_output_of_another_shape():
    with hub.ParallelEnv(2, WideObservationEnv) as env:
        with pytest.raises(WorkerError, match="observation"):
            env.step(env.rand_action(env.reset()))


def test_partial_resets_reach_only_the_chosen_workers():
    serial, parallel = _pair(CountingEnv, {"max_steps": 10}, n=3)
    with parallel:
        outs = []
        for env in (serial, parallel):
            td = env.reset()
            for _ in range(2):
                td = env.step_mdp(env.step(env.rand_action(td)))
            td["_reset"] = torch.tensor([[False], [True], [False]])
            out = env.reset(td)
            outs.append(out)
            assert out["observation"].squeeze(-1).tolist() == [2, 0, 2]
            assert "_reset" not in td.keys()
        _assert_same(*outs)
        # nothing flagged: no worker is touched
        td = parallel.reset()
        td["_reset"] = torch.zeros(3, 1, dtype=torch.bool)
        assert parallel.reset(td)["observation"].sum() == 0


def test_nested_partial_resets_match_serial():
    serial, parallel = _pair(MultiAgentCountingEnv, {"n_agents": 3, "max_steps": 4})
    with parallel:
        outs = []
        for env in (serial, parallel):
            td = env.reset()
            for _ in range(2):
                td = env.step_mdp(env.step(env.rand_action(td)))
            td["agents", "_reset"] = torch.tensor([[[True], [False], [False]]] * 2)
            outs.append(env.reset(td))
        _assert_same(*outs)
        assert outs[1]["agents", "observation"].squeeze(-1).tolist() == [[0, 2, 2], [0, 2, 2]]


def test_partial_steps_skip_workers():
    parallel = hub.ParallelEnv(2, CountingEnv)
    with parallel:
        td = parallel.rand_action(parallel.reset())
        td["_step"] = torch.tensor([True, False])
        out = parallel.step(td)
        assert out["next", "observation"].squeeze(-1).tolist() == [1, 0]
        assert [c.item() for c in parallel.count] == [1, 0]


def test_attribute_forwarding_get_set_call():
    env = hub.ParallelEnv(2, FlakyEnv, [{"max_steps": 3}, {"max_steps": 5}])
    with env:
        assert env.max_steps == [3, 5]
        env.set_attr("max_steps", 7)
        assert env.get_attr("max_steps") == [7, 7]
        env.set_attr("max_steps", [2, 4])
        assert env.max_steps == [2, 4]
        assert env.call("double", 21) == [42, 42]
        assert env.double(2) == [4, 4]  # a forwarded method
        assert env.call("set_seed", 1, static_seed=True) == [1, 1]
        with pytest.raises(AttributeError):
            env.no_such_attribute  # noqa: B018
        assert not hasattr(env, "no_such_attribute")
        assert isinstance(env.rand_action(), TensorDict)  # the parent's own method
        methods = env.get_attr("double")
        with pytest.raises(TypeError, match="env.call"):
            methods[0](1)


def test_call_at_calls_the_sub_envs_of_indices_only():
    env = hub.ParallelEnv(4, FlakyEnv, envs_per_worker=2)
    serial = hub.SerialEnv(4, FlakyEnv)
    with env:
        for batch in (env, serial):
            batch.call_at([3, 0], "__setattr__", "tag", 7)
            assert batch.call_at([0, 3, 1], "double", 2) == [4, 4, 4]
            assert batch.call_at([3, 0], "__getattribute__", "tag") == [7, 7]
            with pytest.raises(AttributeError):
                batch.get_attr("tag")  # sub-envs 1 and 2 were not called
            with pytest.raises(IndexError, match="sub-env 4 of 4"):
                batch.call_at([4], "double", 1)


def test_a_natively_batched_worker_is_one_object_for_its_sub_envs():
    """``hub:Pendulum`` batches natively: a worker holds one env for its sub-envs."""
    env = hub.make_env("hub:Pendulum", num_envs=4, batching="parallel", num_workers=2)
    with env:
        assert env.get_attr("max_speed") == [8.0] * 4
        env.set_attr("max_speed", 9.0)
        assert env.call("__getattribute__", "max_speed") == [9.0] * 4
        with pytest.raises(WorkerError, match="one value for all of them"):
            env.set_attr("max_speed", [1.0, 2.0, 3.0, 4.0])
        assert env.call_at([2, 3], "set_seed", 1) == [3, 3]  # the whole worker: both rows
        with pytest.raises(WorkerError, match="envs_per_worker=1"):
            env.call_at([2], "set_seed", 1)
        # per-index attributes: the whole worker's rows, or an error naming the way out
        assert env.get_attr_at([3, 2], "max_speed") == [9.0, 9.0]
        env.set_attr_at([2, 3], "max_speed", [7.0, 7.0])
        assert env.get_attr("max_speed") == [9.0, 9.0, 7.0, 7.0]
        with pytest.raises(WorkerError, match="envs_per_worker=1"):
            env.get_attr_at([2], "max_speed")
        with pytest.raises(WorkerError, match="envs_per_worker=1"):
            env.set_attr_at([2], "max_speed", [1.0])
        with pytest.raises(ValueError, match="give one each"):
            env.set_attr_at([0, 1], "max_speed", [1.0])


def test_seeding_matches_serial_chain():
    serial, parallel = _pair(PendulumEnv, n=3)
    with parallel:
        assert parallel.set_seed(7) == serial.set_seed(7)
        assert torch.equal(parallel.reset()["th"], serial.reset()["th"])


def test_step_send_fetch_and_reset_send_fetch():
    serial, parallel = _pair(CountingEnv, {"max_steps": 2})
    with parallel:
        parallel.reset_send()
        td = parallel.reset_fetch(timeout=30)
        torch.manual_seed(0)
        parallel.step_send(parallel.rand_action(td))
        got = parallel.step_fetch()
        torch.manual_seed(0)
        want = serial.step(serial.rand_action(serial.reset()))
        _assert_same(got, want)
        with pytest.raises(AsyncCallError, match="without a pending step_send"):
            parallel.step_fetch()
        parallel.step_send(parallel.rand_action(td))
        with pytest.raises(AsyncCallError, match="call step_fetch"):
            parallel.step_send(parallel.rand_action(td))
        with pytest.raises(AsyncCallError, match="call step_fetch"):
            parallel.reset()
        with pytest.raises(AsyncCallError, match="a step is pending"):
            parallel.reset_fetch()
        nxt = parallel.step_mdp(parallel.step_fetch())
        nxt["_reset"] = torch.tensor([[True], [False]])
        parallel.reset_send(nxt)
        assert parallel.reset_fetch()["observation"].squeeze(-1).tolist() == [0, 2]


def test_checks_catch_non_finite_rewards_from_workers():
    env = hub.ParallelEnv(2, NanRewardEnv, checks=True)
    with env:
        with pytest.raises(SpecMismatchError, match="non-finite"):
            env.rollout(2)
    unchecked = hub.ParallelEnv(2, NanRewardEnv)
    with unchecked:
        assert unchecked.rollout(2)["next", "reward"].isnan().all()


def test_specs_shared_memory_cannot_hold_are_refused():
    env = hub.ParallelEnv(2, NonTensorStateEnv)
    with env, pytest.raises(HubError, match="non-tensor input 'text'"):
        env.reset()


def test_wrong_action_shapes_raise_in_the_parent():
    env = hub.ParallelEnv(2, CountingEnv)
    with env:
        td = env.reset()
        td["action"] = torch.zeros(2, 3, dtype=torch.int64)
        with pytest.raises(SpecMismatchError, match="action"):
            env.step(td)
        env.rollout(2)  # still usable


def test_closed_env_says_so():
    env = hub.ParallelEnv(2, CountingEnv)
    env.close()
    env.close()
    with pytest.raises(ClosedEnvError):
        env.reset()
    with pytest.raises(ClosedEnvError):
        env.get_attr("max_steps")


def test_make_env_builds_parallel_envs():
    env = hub.make_env("hub:Counting", num_envs=2, batching="parallel", max_steps=3)
    with env:
        assert isinstance(env, hub.ParallelEnv)
        assert env.rollout(5)["next", "observation"][:, -1].squeeze(-1).tolist() == [3, 3]
