"""MultiThreadedEnv against real EnvPool: specs, rollouts, autoreset, partial resets, seeding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hub_envpool import MultiThreadedEnv, MultiThreadedEnvWrapper

import hub
from tests.plugins.hub_envpool.envpool_helpers import (
    backend_params,
    predrawn_policy,
    reference_run,
)

ACCEPTANCE_TASKS = ["Pong-v5", "Breakout-v5", "CartPole-v1", "Pendulum-v1", "HalfCheetah-v4"]


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("task", ACCEPTANCE_TASKS)
def test_acceptance_tasks_pass_check_env_specs_and_roll_out(task, backend):
    with hub.set_gym_backend(backend):
        env = hub.make_env(f"envpool:{task}", num_envs=2, seed=0)
        hub.check_env_specs(env, n_steps=3)
        data = env.rollout(20, break_when_any_done=False)
    assert data.batch_size == (2, 20)
    assert data["next", "reward"].shape == (2, 20, 1)
    env.close()


def test_dict_observations_become_entries():
    env = hub.make_env("envpool:CheetahRun-v1", num_envs=2, seed=0)
    assert sorted(env.observation_keys) == ["position", "velocity"]
    # EnvPool marks these unbounded with C++'s numeric_limits<double>::min(): hub reads -inf
    assert type(env.observation_spec["position"]).__name__ == "Unbounded"
    hub.check_env_specs(env, n_steps=3)
    env.close()


def test_native_batching_and_the_unbatched_single_env():
    batched = hub.make_env("envpool:CartPole-v1", num_envs=8)
    assert isinstance(batched, MultiThreadedEnv) and batched.batch_size == (8,)
    single = hub.make_env("envpool:CartPole-v1", seed=0)
    assert single.batch_size == () and single.num_workers == 1
    hub.check_env_specs(single, n_steps=5)
    data = single.rollout(30, break_when_any_done=False)
    assert data["next", "observation"].shape == (30, 4)
    assert data["next", "done"].shape == (30, 1)


def test_rollout_across_episode_ends_matches_a_reference_that_resets_by_hand():
    steps, n = 300, 4
    torch.manual_seed(0)
    actions = torch.randint(0, 2, (steps, n))
    env = hub.make_env("envpool:CartPole-v1", num_envs=n, seed=7, categorical_action_encoding=True)
    data = env.rollout(steps, predrawn_policy(actions), break_when_any_done=False)
    ref = reference_run("CartPole-v1", n, 7, actions.numpy().astype(np.int32))
    assert int(data["next", "done"].sum()) > 20  # many episode ends in the run
    np.testing.assert_array_equal(data["observation"].transpose(0, 1).numpy(), ref["observation"])
    np.testing.assert_array_equal(
        data["next", "observation"].transpose(0, 1).numpy(), ref["next_observation"]
    )
    np.testing.assert_array_equal(data["next", "reward"][..., 0].T.numpy(), ref["reward"])
    np.testing.assert_array_equal(data["next", "terminated"][..., 0].T.numpy(), ref["terminated"])
    # CartPole pays 1 on every real step: a dropped-action step would pay 0
    assert bool((data["next", "reward"] == 1).all())


def test_step_and_maybe_reset_loop_has_no_fabricated_step():
    env = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=1)
    td = env.reset()
    for _ in range(200):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert bool((data["next", "reward"] == 1).all())
        assert not bool(td["done"].any())


@pytest.mark.parametrize(
    ("task", "options"),
    [("CartPole-v1", {}), ("CartPole-v1", {"frame_skip": 2}), ("Pendulum-v1", {})],
    ids=["cartpole", "frame-skip", "pendulum"],
)
def test_reset_of_ended_envs_by_id_matches_the_generic_partial_reset(task, options):
    """The plugin resets the envs EnvPool said ended (``_reset_finished``); ``checks=True``
    takes hub's generic path, which reads the done flags back: both give the same data, also
    when a partial step (``"_step"``) comes in between."""
    runs = []
    for checks in (False, True):
        env = hub.make_env(f"envpool:{task}", num_envs=4, seed=3, checks=checks, **options)
        torch.manual_seed(0)
        td = env.reset()
        steps = []
        for i in range(150):
            td = env.rand_action(td)
            if i % 37 == 5:
                td.set("_step", torch.tensor([True, False, True, True]))
            data, td = env.step_and_maybe_reset(td)
            td = td.exclude("_step")
            steps += [data.exclude("_step"), td.clone()]
        steps.append(env.rollout(60, break_when_any_done=False, auto_reset=False, tensordict=td))
        runs.append(steps)
        env.close()
    ended = sum(int(step["next", "done"].sum()) for step in runs[0][:-1:2])
    ended += int(runs[0][-1]["next", "done"].sum())
    assert ended >= (4 if task == "Pendulum-v1" else 10)  # Pendulum ends at step 200
    for fast, generic in zip(*runs):
        assert set(fast.keys(True, True)) == set(generic.keys(True, True))
        for key in fast.keys(True, True):
            assert torch.equal(fast[key], generic[key]), key


def test_partial_reset_resets_only_the_chosen_envs():
    n = 3
    actions = np.zeros((4, n), dtype=np.int32)
    env = MultiThreadedEnv(n, "CartPole-v1", categorical_action_encoding=True)
    env.set_seed(3)
    td = env.reset()
    for a in actions:
        td = env.step_mdp(env.step(td.set("action", torch.from_numpy(a.astype(np.int64)))))
    before = td["observation"].clone()
    td.set("_reset", torch.tensor([[False], [True], [False]]))
    after = env.reset(td)["observation"]
    assert torch.equal(after[[0, 2]], before[[0, 2]])
    assert not torch.equal(after[1], before[1])
    # the same calls on raw EnvPool: reset env 1 alone, then one step of all
    import envpool

    pool = envpool.make("CartPole-v1", env_type="dm", num_envs=n, seed=3)
    pool.reset()
    for a in actions:
        pool.step(a)
    first = pool.reset(np.array([1], dtype=np.int32)).observation.obs
    np.testing.assert_array_equal(after[1].numpy(), first[0])
    step = env.step(td.set("action", torch.ones(n, dtype=torch.int64)))
    expected = pool.step(np.ones(n, np.int32)).observation.obs
    np.testing.assert_array_equal(step["next", "observation"].numpy(), expected)


def test_partial_reset_keeps_the_input_rows_of_the_envs_not_reset():
    """The plugin merges a partial reset itself (masks_partial_resets): the rows it does not
    reset are the input's, as EnvBase's own masking would give, even where they differ from
    the env's last output."""
    env = MultiThreadedEnv(3, "CartPole-v1", categorical_action_encoding=True)
    assert env.masks_partial_resets
    td = env.reset()
    td["observation"][0] = 123.0
    td["done"][2] = True  # an env the caller chose not to reset keeps its flag
    td["truncated"][2] = True
    td.set("_reset", torch.tensor([[False], [True], [False]]))
    out = env.reset(td)
    assert (out["observation"][0] == 123.0).all()
    assert not (out["observation"][1] == 123.0).any()
    assert out["done"].squeeze(-1).tolist() == [False, False, True]
    assert out["truncated"].squeeze(-1).tolist() == [False, False, True]
    assert out["terminated"].squeeze(-1).tolist() == [False, False, False]
    assert "_reset" not in out.keys() and "_reset" not in td.keys()
    assert torch.equal(td["observation"], out["observation"])


def test_stepping_an_ended_episode_without_reset_is_an_error():
    env = hub.make_env("envpool:CartPole-v1", num_envs=2, seed=0, categorical_action_encoding=True)
    td = env.reset()
    for _ in range(100):
        td = env.step_mdp(env.step(td.set("action", torch.zeros(2, dtype=torch.int64))))
        if bool(td["done"].any()):
            break
    with pytest.raises(hub.errors.HubError, match="not reset"):
        env.step(td.set("action", torch.zeros(2, dtype=torch.int64)))


def test_step_before_reset_is_an_error():
    env = hub.make_env("envpool:CartPole-v1", num_envs=2)
    with pytest.raises(hub.errors.HubError, match="reset"):
        env.step(env.rand_action())


def test_break_when_all_done_skips_finished_envs():
    env = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=2)
    data = env.rollout(500, break_when_any_done=False, break_when_all_done=True)
    assert bool(data["next", "done"][:, -1].all())
    stepped = data["next", "reward"] != 0
    assert bool((data["next", "reward"][stepped] == 1).all())


def test_same_seed_same_rollout_and_set_seed_rebuilds_the_pool():
    def run(env):
        torch.manual_seed(0)
        return env.rollout(120, break_when_any_done=False)

    a = run(hub.make_env("envpool:CartPole-v1", num_envs=3, seed=11))
    b = run(hub.make_env("envpool:CartPole-v1", num_envs=3, seed=11))
    c = run(hub.make_env("envpool:CartPole-v1", num_envs=3, seed=12))
    assert torch.equal(a["next", "observation"], b["next", "observation"])
    assert not torch.equal(a["next", "observation"], c["next", "observation"])
    env = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=12)
    run(env)
    env.set_seed(11)  # closes the pool; the next reset builds one with seed 11
    assert torch.equal(run(env)["next", "observation"], a["next", "observation"])


def test_hub_seeds_beyond_int32_are_folded():
    env = hub.make_env("envpool:CartPole-v1", num_envs=2)
    next_seed = env.set_seed(2**32 - 5)
    assert next_seed is not None
    assert env.rollout(3).batch_size == (2, 3)


def test_frame_skip_repeats_actions_and_sums_rewards():
    steps, skip = 5, 3
    actions = torch.rand(steps, 2, 1) * 4 - 2
    env = MultiThreadedEnv(2, "Pendulum-v1", frame_skip=skip, create_env_kwargs={"seed": 4})
    data = env.rollout(steps, predrawn_policy(actions), break_when_any_done=False)
    repeated = actions.repeat_interleave(skip, dim=0).numpy()
    ref = reference_run("Pendulum-v1", 2, 4, repeated)
    np.testing.assert_allclose(
        data["next", "observation"].transpose(0, 1).numpy(),
        ref["next_observation"][skip - 1 :: skip],
    )
    summed = ref["reward"].reshape(steps, skip, 2).sum(1)
    np.testing.assert_allclose(data["next", "reward"][..., 0].T.numpy(), summed, rtol=1e-5)


def test_outputs_are_not_overwritten_by_later_steps():
    env = hub.make_env("envpool:CartPole-v1", num_envs=2, seed=0)
    td = env.reset()
    kept, copies = [], []
    for _ in range(60):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        kept.append(data["next", "observation"])
        copies.append(data["next", "observation"].clone())
    assert all(torch.equal(k, c) for k, c in zip(kept, copies))


def test_device_and_one_hot_actions():
    env = hub.make_env("envpool:Pong-v5", num_envs=2, device="cpu")
    assert env.device == torch.device("cpu")
    assert type(env.action_spec).__name__ == "OneHot" and env.action_spec.shape == (2, 6)
    data = env.rollout(3)
    assert data.device == torch.device("cpu")
    assert data["observation"].dtype == torch.uint8


def test_wrapper_of_an_envpool_object():
    import envpool

    for env_type in ("gymnasium", "dm"):
        pool = envpool.make("CartPole-v1", env_type=env_type, num_envs=2, seed=0)
        env = MultiThreadedEnvWrapper(pool, categorical_action_encoding=True)
        assert env.rollout(5, break_when_any_done=False).batch_size == (2, 5)
        with pytest.raises(hub.errors.HubError, match="envpool.make"):
            env.set_seed(1)
        env.close()


def test_errors_for_people():
    with pytest.raises(hub.errors.UnknownEnvError, match="Pong-v5"):
        MultiThreadedEnv(2, "Pongg-v5")
    with pytest.raises(ValueError, match="num_envs"):
        MultiThreadedEnv(2, "Pong-v5", create_env_kwargs={"num_envs": 4})
    with pytest.raises(TypeError, match="EnvPool object"):
        MultiThreadedEnvWrapper(object())
    with pytest.raises(ValueError, match="frame_skip"):
        MultiThreadedEnv(2, "CartPole-v1", frame_skip=0)


def _step_until_an_episode_ends(env, pool, n):
    """Step ``env`` and the raw ``pool`` (same seed) with action 0, checking they agree, until
    an episode ends; the done mask and hub's next input."""
    zeros = np.zeros(n, dtype=np.int32)
    td = env.reset()
    for _ in range(100):
        td = env.step_mdp(env.step(td.set("action", torch.zeros(n, dtype=torch.int64))))
        np.testing.assert_array_equal(td["observation"].numpy(), pool.step(zeros)[0])
        done = td["done"].squeeze(-1).numpy()
        if done.any():
            return done.copy(), td
    raise AssertionError("no episode ended")


@pytest.mark.filterwarnings("ignore::UserWarning")  # gymnasium on EnvPool's float64 bounds
@pytest.mark.parametrize(
    "then",
    [
        "reset-ended",
        "full-reset",
        "reset-more",
        "reset-another-first",
        "partial-step",
        "close",
        "set-seed",
    ],
)
def test_the_reset_sent_early_is_collected_by_whatever_comes_next(then):
    """A step that ends episodes sends their reset at once (``PoolRunner.step``); whatever the
    caller does next must collect it first, and a reset of those envs uses it: each env is
    reset once per reset asked for, and the data is that of raw EnvPool with the ended envs
    reset right after the step."""
    import envpool

    n = 3
    env = MultiThreadedEnv(n, "CartPole-v1", categorical_action_encoding=True)
    env.set_seed(5)
    pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=5)
    pool.reset()
    done, td = _step_until_an_episode_ends(env, pool, n)
    assert env._runner.inflight is not None  # the reset is under way
    ended = np.flatnonzero(done).astype(np.int32)
    first = pool.reset(ended)[0]  # what the early reset computes
    if then == "close":
        env.close()
        assert env._runner.inflight is None
        return
    if then == "set-seed":
        env.set_seed(5)
        fresh = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=5)
        np.testing.assert_array_equal(env.reset()["observation"].numpy(), fresh.reset()[0])
        return
    if then == "full-reset":  # the early reset serves the ended envs; the others reset now
        live = np.flatnonzero(~done).astype(np.int32)
        obs = env.reset()["observation"].numpy()
        np.testing.assert_array_equal(obs[ended], first)
        np.testing.assert_array_equal(obs[live], pool.reset(live)[0])
    elif then in ("reset-more", "reset-another-first"):
        live = np.flatnonzero(~done).astype(np.int32)[:1]  # an env whose episode goes on
        assert live.size == 1
        mask = done.copy()
        mask[live] = True
        if then == "reset-another-first":  # the live env alone, then the ended ones
            td.set("_reset", torch.from_numpy(~done & mask).unsqueeze(-1))
            td = env.reset(td)
            np.testing.assert_array_equal(td["observation"].numpy()[live], pool.reset(live)[0])
            mask = done
        td.set("_reset", torch.from_numpy(mask).unsqueeze(-1))
        obs = env.reset(td)["observation"].numpy()
        np.testing.assert_array_equal(obs[ended], first)
        if then == "reset-more":
            np.testing.assert_array_equal(obs[live], pool.reset(live)[0])
    elif then == "partial-step":  # the envs still running step first; the reset waits
        others = torch.from_numpy(~done)
        td.set("_step", others.unsqueeze(-1))
        stepped = env.step(td.set("action", torch.ones(n, dtype=torch.int64)))
        live = np.flatnonzero(~done).astype(np.int32)
        pool.send(np.ones(len(live), np.int32), live)
        expected = pool.recv()[0]
        np.testing.assert_array_equal(stepped["next", "observation"].numpy()[live], expected)
        td = env.step_mdp(stepped.exclude("_step"))
        td.set("_reset", torch.from_numpy(done).unsqueeze(-1))
        out = env.reset(td)
        np.testing.assert_array_equal(out["observation"].numpy()[ended], first)
    else:
        td.set("_reset", torch.from_numpy(done).unsqueeze(-1))
        out = env.reset(td)
        np.testing.assert_array_equal(out["observation"].numpy()[ended], first)
    data = env.rollout(40, break_when_any_done=False)  # and the env goes on as usual
    assert bool((data["next", "reward"] == 1).all())
    env.close()
    pool.close()


@pytest.mark.parametrize("task", ["CartPole-v1", "Pong-v5"])
def test_step_arrays_gives_what_step_returns(task):
    """The array-level step (what a ParallelEnv worker calls) gives the data of ``step``,
    across episode ends."""
    envs = [hub.make_env(f"envpool:{task}", seed=4) for _ in range(2)]
    tds = [env.reset() for env in envs]
    torch.manual_seed(0)
    ended = 0
    for _ in range(120 if task == "CartPole-v1" else 30):
        action = envs[0].rand_action(tds[0])["action"]
        out, first = envs[0].step_reset_arrays({"action": action.numpy()})
        built = envs[0].env_keys.outputs.build(out)[0]
        data, tds[1] = envs[1].step_and_maybe_reset(tds[1].set("action", action.clone()))
        for key in data["next"].keys(True, True):
            assert torch.equal(built[key], data["next", key]), key
        if first is not None:
            ended += 1
            reset = envs[0].env_keys.outputs.build(first)[0]
            assert torch.equal(reset["observation"], tds[1]["observation"])
        tds[0] = tds[1].clone()
    assert ended > 0 or task == "Pong-v5"


def test_parallel_env_of_envpool_workers_matches_serial():
    actions = torch.randint(0, 2, (150, 3))
    runs = []
    for batching in ("serial", "parallel"):
        env = hub.make_env(
            "envpool:CartPole-v1",
            num_envs=3,
            seed=11,
            batching=batching,
            categorical_action_encoding=True,
        )
        runs.append(env.rollout(150, predrawn_policy(actions), break_when_any_done=False))
        env.close()
    assert int(runs[0]["next", "done"].sum()) > 10
    for key in runs[0].keys(True, True):
        assert torch.equal(runs[0][key], runs[1][key]), key
