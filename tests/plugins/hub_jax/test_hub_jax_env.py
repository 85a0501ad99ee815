"""``JaxEnv`` over real gymnax and Brax envs: zero-copy outputs, the seeding rule (a native batch
of N equals N single envs seeded s, s+1, ...), hub's auto-reset semantics (the true last
observation, no fabricated transition), terminated and truncated apart, partial steps and resets."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from hub_jax import JaxEnv

import hub

gymnax = pytest.importorskip("gymnax")


def cartpole(num_envs=None, **kwargs):
    return hub.make_env("gymnax:CartPole-v1", num_envs=num_envs, **kwargs)


def test_observations_share_memory_with_jax():
    env = cartpole(4)
    env.set_seed(0)
    td = env.reset()
    runner = env._runner
    assert td["observation"].data_ptr() == runner.obs["observation"].unsafe_buffer_pointer()
    td = env.step(env.rand_action(td))
    obs = td["next", "observation"]
    assert obs.data_ptr() == runner.obs["observation"].unsafe_buffer_pointer()
    assert obs.dtype == torch.float32 and obs.shape == (4, 4)


def test_a_batch_equals_single_envs_seeded_s_plus_i():
    """Sub-env i of a batch seeded 7 is the single env seeded 7 + i, across episode ends."""
    batch = cartpole(3, categorical_action_encoding=True)
    batch.set_seed(7)
    torch.manual_seed(0)
    actions = torch.randint(0, 2, (120, 3))

    def run(env, column):
        td = env.reset()
        rows = []
        for t in range(120):
            action = actions[t] if column is None else actions[t, column]
            td.set("action", action)
            td, td_next = env.step_and_maybe_reset(td)
            rows.append(td["next"].clone())
            td = td_next
        return torch.stack(rows, 0)

    together = run(batch, None)
    assert together["done"].any()  # episodes end inside the run
    for i in range(3):
        single = cartpole(None, categorical_action_encoding=True)
        single.set_seed(7 + i)
        alone = run(single, i)
        for key in ("observation", "reward", "terminated", "truncated"):
            assert torch.equal(together[key][:, i], alone[key]), key


def test_first_key_is_prng_key_of_seed_plus_index():
    env = cartpole(2)
    env.set_seed(5)
    keys = np.asarray(env._runner.keys)
    assert np.array_equal(keys[1], np.asarray(jax.random.PRNGKey(6)))


def test_ending_step_returns_the_true_last_observation_and_no_step_is_fabricated():
    env = cartpole(8, categorical_action_encoding=True)
    env.set_seed(0)
    data = env.rollout(300, break_when_any_done=False)
    assert bool((data["next", "reward"] == 1).all())  # every transition is a real one
    done = data["next", "done"].squeeze(-1)
    assert done.any()
    env_id, t = [int(i) for i in done.nonzero()[0]]
    last = data["next", "observation"][env_id, t]
    # CartPole ends when the pole or the cart leave their range: the last observation shows it
    assert bool((last[2].abs() > 0.2094) | (last[0].abs() > 2.4))
    following = data["observation"][env_id, t + 1]
    assert bool((following.abs() <= 0.05).all())  # a new episode's first observation


def test_truncation_is_told_apart_from_termination():
    env = hub.make_env("gymnax:Pendulum-v1", num_envs=2, max_steps_in_episode=5)
    env.set_seed(0)
    data = env.rollout(5, break_when_any_done=False)
    assert data["next", "truncated"][:, -1].all() and not data["next", "terminated"].any()
    assert not data["next", "done"][:, :-1].any()


def test_stepping_an_ended_env_before_its_reset_is_refused():
    env = hub.make_env("gymnax:Pendulum-v1", num_envs=2, max_steps_in_episode=1)
    td = env.reset()
    td = env.step(env.rand_action(td))
    with pytest.raises(hub.errors.HubError, match="ended their episode"):
        env.step(env.rand_action(hub.step_mdp(td)))


def test_partial_step_moves_only_the_chosen_rows():
    env = cartpole(3, categorical_action_encoding=True)
    env.set_seed(1)
    td = env.reset()
    before = td["observation"].clone()
    td["action"] = torch.ones(3, dtype=torch.int64)
    td["_step"] = torch.tensor([True, False, True])
    out = env.step(td)
    after = env._runner.obs["observation"]
    assert torch.equal(torch.from_dlpack(after)[1], before[1])
    assert not torch.equal(out["next", "observation"][0], before[0])


def test_fused_reset_gives_the_data_of_a_separate_reset():
    """The reset a fused step prepares for the sub-envs that ended equals the separate reset
    that an env without fusing computes when hub resets them."""
    fused = cartpole(16, categorical_action_encoding=True)
    assert fused.simulator.fuse_reset
    separate = JaxEnv(
        dataclasses.replace(fused.simulator, fuse_reset=False),
        16,
        categorical_action_encoding=True,
    )
    data = []
    for env in (fused, separate):
        env.set_seed(3)
        torch.manual_seed(0)
        data.append(env.rollout(200, break_when_any_done=False))
    assert data[0]["next", "done"].sum() > 16
    for key in ("observation", ("next", "observation"), ("next", "reward")):
        assert torch.equal(data[0][key], data[1][key]), key


def test_one_hot_actions_become_indices():
    env = cartpole(2)
    assert isinstance(env.action_spec, hub.specs.OneHot)
    td = env.reset()
    td["action"] = torch.tensor([[False, True], [True, False]])
    env.step(td)


def test_specs_follow_what_the_env_returns_where_its_space_differs():
    """gymnax's Catch declares integer observations and returns floats: the spec says float."""
    env = hub.make_env("gymnax:Catch-bsuite", num_envs=2)
    assert env.observation_spec["observation"].dtype == torch.float32
    hub.check_env_specs(env, seed=0)


def test_gymnax_spaces_convert_through_hub():
    from gymnax.environments import spaces

    spec = hub.convert_spec(spaces.Box(0.0, 1.0, (3,), jnp.float32), batch_size=(2,))
    assert isinstance(spec, hub.specs.Bounded) and spec.shape == (2, 3)
    assert hub.convert_spec(spaces.Discrete(4), categorical_action_encoding=True).n == 4


def test_the_listing_leaves_out_the_envs_that_download_data_or_cannot_step():
    from hub_jax.compat import gymnax_broken_ids

    listed = hub.list_envs("gymnax")
    assert "gymnax:MNISTBandit-bsuite" not in listed
    assert len(listed) == len(gymnax.registered_envs) - 1 - len(gymnax_broken_ids())
    for env_id in gymnax_broken_ids():
        with pytest.raises(hub.errors.HubError, match="does not serve"):
            hub_jax_make(env_id)


def hub_jax_make(env_id):
    return JaxEnv.from_gymnax(env_id)


def test_envs_whose_observations_leave_their_space_get_unbounded_specs():
    env = hub.make_env("gymnax:MemoryChain-bsuite", num_envs=2)
    assert isinstance(env.observation_spec["observation"], hub.specs.Unbounded)
    hub.check_env_specs(env, seed=0)


def test_brax_fast_rolls_out_with_a_time_limit():
    pytest.importorskip("brax")
    env = hub.make_env("brax:fast", num_envs=2, episode_length=4, seed=0)
    data = env.rollout(8, break_when_any_done=False)
    assert data["next", "truncated"].squeeze(-1)[:, 3].all()
    assert data["next", "observation"].shape == (2, 8, 2)
    assert isinstance(env, JaxEnv)


def test_reset_takes_a_seed():
    env = cartpole(2)
    a = env.reset(seed=4)["observation"]
    b = env.reset(seed=4)["observation"]
    assert torch.equal(a, b)
    with pytest.raises(hub.errors.InvalidSeedError):
        env.reset(seed=-1)


def test_jumanji_multi_agent_rewards_nested_keys_and_multi_discrete_actions():
    pytest.importorskip("jumanji")
    env = hub.make_env("jumanji:Connector-v3", num_envs=2, seed=0)
    assert env.reward_spec.shape == (2, 10)  # one reward per agent
    assert isinstance(env.action_spec, hub.specs.MultiOneHot)
    data = env.rollout(3, break_when_any_done=False)
    assert data["next", "reward"].shape == (2, 3, 10)
    packing = hub.make_env("jumanji:BinPack-v2", categorical_action_encoding=True)
    assert ("ems", "x1") in packing.observation_spec.keys(include_nested=True)
    assert isinstance(packing.action_spec, hub.specs.MultiCategorical)
    hub.check_env_specs(packing, seed=0)


def test_a_jumanji_batch_has_the_specs_of_a_stack_of_single_envs():
    """A scalar per env (Snake's step_count) is one number per row: [N, 1], as a SerialEnv of
    single envs stacks it (the kit's parallel check compares the two)."""
    pytest.importorskip("jumanji")  # not in tox -e gymnax10 (gymnax 1.0's pins)
    native = hub.make_env("jumanji:Snake-v1", num_envs=2)
    serial = hub.make_env("jumanji:Snake-v1", num_envs=2, batching="serial")
    try:
        for key in native.observation_spec.keys(True, True):
            assert native.observation_spec[key].shape == serial.observation_spec[key].shape, key
        assert native.reset()["step_count"].shape == (2, 1)
    finally:
        native.close()
        serial.close()
