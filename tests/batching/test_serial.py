"""SerialEnv: batch size, per-worker kwargs, seeding, attribute forwarding, specs."""

from __future__ import annotations

import pytest
import torch

import hub
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv, PendulumEnv
from hub.errors import HubError, SpecMismatchError


def test_batch_size_specs_and_sub_envs():
    env = hub.SerialEnv(3, PendulumEnv)
    assert env.batch_size == (3,)
    assert env.action_spec.shape == (3, 1)
    assert len(env.envs) == 3 and env[1] is env.envs[1]
    hub.check_env_specs(env)


def test_matches_a_natively_batched_env():
    serial = hub.SerialEnv(4, CountingEnv, {"max_steps": 3})
    native = CountingEnv(max_steps=3, batch_size=(4,))
    torch.manual_seed(0)
    a = serial.rollout(7, break_when_any_done=False)
    torch.manual_seed(0)
    b = native.rollout(7, break_when_any_done=False)
    assert (a == b).all()


def test_per_worker_kwargs_and_bounded_specs_stack():
    env = hub.SerialEnv(2, PendulumEnv, [{"g": 9.81}, {"g": 1.62}])
    assert env.g == [9.81, 1.62]
    env = hub.SerialEnv(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 5}])
    hub.check_env_specs(env)


def test_heterogeneous_specs_are_refused():
    with pytest.raises(HubError, match="sub-env 1"):
        hub.SerialEnv(2, [lambda: CountingEnv(), lambda: PendulumEnv()])
    with pytest.raises(ValueError, match="2 factories for 3 sub-envs"):
        hub.SerialEnv(3, [CountingEnv, CountingEnv])


def test_call_get_attr_set_attr_and_forwarded_methods():
    env = hub.SerialEnv(2, CountingEnv)
    assert env.get_attr("max_steps") == [10, 10]
    env.set_attr("max_steps", [3, 4])
    assert env.max_steps == [3, 4]
    env.set_attr("max_steps", 6)
    assert env.max_steps == [6, 6]
    assert env.call("set_seed", 1, static_seed=True) == [1, 1]
    assert env.set_seed(1, static_seed=True) == 1
    with pytest.raises(AttributeError):
        env.no_such_attribute  # noqa: B018


def test_seeding_chains_through_sub_envs():
    env = hub.SerialEnv(3, PendulumEnv)
    seed = env.set_seed(0)
    expected = 0
    for _ in range(3):
        expected = hub.envs.next_seed(expected)
    assert seed == expected
    first = env.reset()["th"]
    env.set_seed(0)
    assert torch.equal(first, env.reset()["th"])
    assert len(set(first.flatten().tolist())) == 3


def test_nested_keys_in_serial_env():
    env = hub.SerialEnv(2, MultiAgentCountingEnv, {"n_agents": 2, "max_steps": 2})
    hub.check_env_specs(env)
    data = env.rollout(4, break_when_any_done=False)
    assert data["next", "agents", "observation"].shape == (2, 4, 2, 1)


def test_close_closes_sub_envs():
    env = hub.SerialEnv(2, CountingEnv)
    env.close()
    assert all(e.is_closed for e in env.envs)
    env.close()


class _HalfStepCounting(CountingEnv):
    """Sub-env 1 of a batch returns a float observation where the spec holds integers."""

    def _step_arrays(self, inputs, rows=None):
        out = super()._step_arrays(inputs, rows)
        if self.max_steps == 99:
            out["observation"] = out["observation"].to(torch.float32) + 0.5
        return out


def test_a_sub_env_output_of_another_kind_is_refused_naming_the_sub_env():
    env = hub.SerialEnv(2, _HalfStepCounting, [{"max_steps": 10}, {"max_steps": 99}])
    td = env.rand_action(env.reset())
    with pytest.raises(SpecMismatchError, match="sub-env 1.*cannot be stored as torch.int64"):
        env.step(td)


def test_a_factory_that_returns_no_env_is_named():
    class NotAnEnv:
        pass

    with pytest.raises(hub.errors.BatchingError, match="sub-env 0 .*NotAnEnv.*not a hub env"):
        hub.SerialEnv(2, NotAnEnv)


@pytest.mark.parametrize("cls", [hub.SerialEnv, hub.ParallelEnv])
def test_a_closed_batch_refuses_attributes_calls_and_seeds(cls):
    env = cls(2, CountingEnv)
    env.close()
    for use in (
        lambda: env.get_attr("max_steps"),
        lambda: env.set_attr("max_steps", 3),
        lambda: env.call("reset"),
        lambda: env.set_seed(0),
        lambda: env.max_steps,
    ):
        with pytest.raises(hub.errors.ClosedEnvError):
            use()
