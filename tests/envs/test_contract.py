"""The env contract: reset/step/"next", step_mdp, done flags, rollout, seeding, closing."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import hub
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv, PendulumEnv
from hub.errors import ClosedEnvError, HubError, SpecMismatchError

from .toy_envs import BadOutputEnv, DoneOnlyEnv, TruncOnlyEnv


def test_step_writes_next_and_keeps_input():
    env = CountingEnv(max_steps=5)
    td = env.reset()
    td = env.step(env.rand_action(td))
    assert td["observation"].item() == 0
    assert td["next", "observation"].item() == 1
    assert set(td["next"].keys()) == {"observation", "reward", "done", "terminated", "truncated"}


def test_done_is_added_when_missing():
    env = DoneOnlyEnv(length=2)
    assert sorted(env.done_keys) == ["done", "terminated", "truncated"]
    data = env.rollout(5)
    assert data["next", "done"].squeeze(-1).tolist() == [False, True]
    assert data["next", "terminated"].squeeze(-1).tolist() == [False, True]
    assert not data["next", "truncated"].any()
    hub.check_env_specs(env)


def test_truncated_only_gives_done_not_terminated():
    data = TruncOnlyEnv(length=2).rollout(5)
    assert data["next", "done"].squeeze(-1).tolist() == [False, True]
    assert not data["next", "terminated"].any()


def test_reset_output_has_false_flags():
    td = DoneOnlyEnv().reset()
    assert not td["done"].any() and not td["terminated"].any() and not td["truncated"].any()


def test_step_mdp_helper_and_method_agree():
    env = CountingEnv()
    td = env.step(env.rand_action(env.reset()))
    td["policy_state"] = torch.ones(2)
    a = hub.step_mdp(td)
    b = env.step_mdp(td)
    assert (
        set(a.keys())
        == set(b.keys())
        == {
            "observation",
            "done",
            "terminated",
            "truncated",
            "policy_state",
        }
    )
    assert torch.equal(a["observation"], td["next", "observation"])


def test_step_mdp_options():
    env = CountingEnv()
    td = env.step(env.rand_action(env.reset()))
    out = hub.step_mdp(td, exclude_reward=False, exclude_done=True, exclude_action=False)
    assert "reward" in out.keys() and "done" not in out.keys() and "action" in out.keys()
    target = TensorDict({}, [])
    assert hub.step_mdp(td, next_tensordict=target) is target


def test_step_and_maybe_reset_resets_only_done_envs():
    env = hub.SerialEnv(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 3}])
    td = env.reset()
    seen = []
    for _ in range(4):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        seen.append(
            (
                data["next", "observation"].squeeze(-1).tolist(),
                td["observation"].squeeze(-1).tolist(),
            )
        )
    assert seen == [([1, 1], [1, 1]), ([2, 2], [0, 2]), ([1, 3], [1, 0]), ([2, 1], [0, 1])]


def test_rollout_time_dim_and_break_rules():
    env = CountingEnv(max_steps=3)
    data = env.rollout(10)
    assert data.batch_size == (3,) and data.names == ["time"]
    data = env.rollout(7, break_when_any_done=False)
    assert data["next", "observation"].squeeze(-1).tolist() == [1, 2, 3, 1, 2, 3, 1]
    batched = CountingEnv(max_steps=3, batch_size=(2,))
    assert batched.rollout(4, break_when_any_done=False).batch_size == (2, 4)
    with pytest.raises(ValueError):
        env.rollout(3, break_when_any_done=True, break_when_all_done=True)
    with pytest.raises(ValueError):
        env.rollout(0)


def test_rollout_without_auto_reset_continues_from_tensordict():
    env = CountingEnv(max_steps=10)
    data = env.rollout(2)
    start = env.step_mdp(data[-1])
    more = env.rollout(2, auto_reset=False, tensordict=start)
    assert more["next", "observation"].squeeze(-1).tolist() == [3, 4]
    with pytest.raises(HubError, match="tensordict"):
        env.rollout(2, auto_reset=False)


def test_rollout_policy_and_callback():
    env = CountingEnv(max_steps=10)

    def policy(td):
        td["action"] = torch.ones(1, dtype=torch.int64)
        return td

    calls = []
    data = env.rollout(3, policy, callback=lambda e, td: calls.append(e is env))
    assert data["next", "reward"].sum().item() == 3.0
    assert calls == [True, True, True]


def test_nonstop_rollout_steps_through_step_and_maybe_reset():
    class Counted(CountingEnv):
        fused = 0

        def step_and_maybe_reset(self, tensordict):
            Counted.fused += 1
            return super().step_and_maybe_reset(tensordict)

    env = Counted(max_steps=3, batch_size=[2])
    data = env.rollout(7, break_when_any_done=False)
    assert Counted.fused == 6  # every step but the last, which resets nothing
    # the steps and resets are those of the step / step_mdp / reset loop
    assert data["next", "observation"][0].squeeze(-1).tolist() == [1, 2, 3, 1, 2, 3, 1]
    assert data["observation"][0].squeeze(-1).tolist() == [0, 1, 2, 0, 1, 2, 0]
    Counted.fused = 0
    env.rollout(7)  # may stop early: the step loop
    env.rollout(7, break_when_any_done=False, callback=lambda e, td: None)  # a callback: too
    assert Counted.fused == 0


def test_rollout_not_contiguous_is_lazy():
    data = CountingEnv().rollout(3, return_contiguous=False)
    assert type(data).__name__ == "LazyStackedTensorDict"


def test_rand_action_in_spec_and_rand_step():
    env = PendulumEnv()
    td = env.rand_action(env.reset())
    assert env.action_spec.is_in(td["action"])
    assert "next" in env.rand_step().keys()
    unlocked = env.rand_action(env.reset(TensorDict({}, [4])))
    assert unlocked["action"].shape == (4, 1)
    ma = MultiAgentCountingEnv(n_agents=3)
    assert ma.rand_action()["agents", "action"].shape == (3, 1)


def test_set_seed_returns_deterministic_next_seed():
    env = PendulumEnv()
    s1 = env.set_seed(1)
    assert s1 == env.set_seed(1) and s1 != 1 and env.set_seed(2) != s1
    assert env.set_seed(5, static_seed=True) == 5
    assert env.set_seed(None) is None
    env.set_seed(3)
    a = env.reset()["th"]
    env.set_seed(3)
    assert torch.equal(a, env.reset()["th"])


def test_close_idempotent_and_context_manager():
    env = CountingEnv()
    env.close()
    env.close()
    assert env.is_closed
    with pytest.raises(ClosedEnvError, match="closed CountingEnv"):
        env.step(TensorDict({"action": torch.zeros(1, dtype=torch.int64)}, []))
    with CountingEnv() as env2:
        env2.reset()
    assert env2.is_closed


def test_specs_locked_but_settable_through_env():
    env = CountingEnv()
    assert env.is_spec_locked
    with pytest.raises(RuntimeError):
        env.full_observation_spec["other"] = hub.specs.Unbounded((1,))
    env.observation_spec = hub.specs.Composite(
        observation=hub.specs.Unbounded((1,), dtype=torch.int64),
        other=hub.specs.Unbounded((1,)),
    )
    assert "other" in env.observation_keys and env.is_spec_locked
    env.set_spec_lock_(False)
    env.full_observation_spec["third"] = hub.specs.Unbounded((1,))
    assert "third" in env.observation_keys


def test_spec_shape_must_start_with_batch():
    env = CountingEnv(batch_size=(4,))
    with pytest.raises(ValueError, match="batch dims first"):
        env.action_spec = hub.specs.Bounded(-1.0, 1.0, shape=(1,))


def test_keys_properties():
    env = MultiAgentCountingEnv()
    assert env.action_keys == [("agents", "action")]
    assert env.action_key == ("agents", "action")
    assert env.reward_keys == [("agents", "reward")]
    assert env.done_key == "done"
    assert "_reset" in env.reset_keys and ("agents", "_reset") in env.reset_keys
    env2 = CountingEnv()
    assert env2.action_key == "action" and env2.reward_key == "reward"


def test_action_errors_name_key_spec_and_value():
    env = CountingEnv()
    td = env.reset()
    td["action"] = torch.zeros(1)  # float instead of int64
    with pytest.raises(SpecMismatchError) as info:
        env.step(td)
    err = info.value
    assert err.key == "action" and "Categorical" in str(err) and "float32" in str(err)
    td = env.reset()
    with pytest.raises(SpecMismatchError, match="no such entry"):
        env.step(td)


def test_checks_on_outputs():
    for problem, text in (("shape", r"shape \[3\]"), ("nan", "non-finite"), ("dtype", "float64")):
        env = BadOutputEnv(problem, checks=True)
        td = env.rand_action(env.reset())
        with pytest.raises(SpecMismatchError, match=text) as info:
            env.step(td)
        assert info.value.key in ("observation", "reward")
    # without checks the cheap path lets outputs through
    env = BadOutputEnv("nan")
    env.step(env.rand_action(env.reset()))


def test_checks_on_action_bounds():
    env = PendulumEnv(checks=True)
    td = env.reset()
    td["action"] = torch.tensor([3.0])
    with pytest.raises(SpecMismatchError, match="bounds"):
        env.step(td)
    hub.make_env("hub:Pendulum", checks=False).step(td.exclude("next"))


def test_fake_tensordict_matches_rollout_keys():
    env = MultiAgentCountingEnv(batch_size=(2,))
    fake = env.fake_tensordict()
    data = env.rollout(2)
    assert set(fake.keys(True, True)) == set(data[..., 0].keys(True, True))


def test_check_env_specs_catches_undeclared_entries():
    class Extra(DoneOnlyEnv):
        def _step(self, tensordict):
            td = super()._step(tensordict)
            td["surprise"] = torch.zeros(1)
            return td

    with pytest.raises(SpecMismatchError, match="surprise"):
        hub.check_env_specs(Extra())


def test_repr_names_the_env():
    assert "CountingEnv(batch_size=[3]" in repr(CountingEnv(batch_size=(3,)))


def test_loops_keep_carried_entries_across_partial_resets():
    env = hub.SerialEnv(2, CountingEnv, [{"max_steps": 1}, {"max_steps": 5}])
    td = env.reset()
    td["hidden"] = torch.arange(2.0)
    data, td = env.step_and_maybe_reset(env.rand_action(td))
    assert td["observation"].squeeze(-1).tolist() == [0, 1]  # the first sub-env was reset
    assert td["hidden"].tolist() == [0.0, 1.0]  # the policy's state survived the reset


@pytest.mark.parametrize("steps", ["10", 2.5, None, True])
def test_rollout_refuses_a_number_of_steps_that_is_not_an_int(steps):
    env = CountingEnv()
    with pytest.raises(TypeError, match="rollout\\(max_steps\\) takes a positive int"):
        env.rollout(steps)


def test_set_seed_after_close_is_refused():
    env = CountingEnv()
    env.close()
    with pytest.raises(hub.errors.ClosedEnvError, match="set_seed"):
        env.set_seed(0)


@pytest.mark.parametrize("with_done", [True, False])
def test_flag_tensors_from_a_hook_are_kept_and_give_the_rows_that_ended(with_done):
    """Bool tensors of the flags' shape (as EnvPool's runner returns) go into the output as the
    hook handed them over; ``done`` is derived when missing; the rows that ended come back."""
    env = CountingEnv(max_steps=5, batch_size=[3])
    plan = env.env_keys.outputs
    term = torch.tensor([[False], [True], [False]])
    trunc = torch.tensor([[False], [False], [True]])
    out = {"observation": torch.zeros(3, 1, dtype=torch.int64), "reward": torch.zeros(3, 1)}
    out.update(terminated=term, truncated=trunc)
    if with_done:
        out["done"] = term | trunc
    td, ended = plan.build(out)
    assert td["terminated"] is term and td["truncated"] is trunc
    assert td["done"].squeeze(-1).tolist() == [False, True, True]
    assert ended.tolist() == [False, True, True]
    none = {**out, "terminated": torch.zeros(3, 1, dtype=torch.bool)}
    none["truncated"] = torch.zeros(3, 1, dtype=torch.bool)
    none.pop("done", None)
    assert plan.build(none)[1] is False
