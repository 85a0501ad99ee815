"""``ale:`` envs: EnvPool's keys and specs, the data of ale-py's own vector env for the same seed
and actions, hub's reset semantics over ale-py's next-step autoreset, rendering, recording."""

import numpy as np
import pytest
import torch
from hub_ale import AleEnv
from hub_ale.runner import RENDER_OPTIONS

import hub

SHORT = {"max_episode_steps": 40}  # episodes end inside a short test


def test_keys_and_specs_are_those_of_envpool():
    pytest.importorskip("envpool")
    for kwargs in ({}, {"categorical_action_encoding": True}):
        ale = hub.make_env("ale:Pong-v5", num_envs=3, **kwargs)
        pool = hub.make_env("envpool:Pong-v5", num_envs=3, **kwargs)
        for name in ("full_observation_spec", "full_action_spec", "full_reward_spec"):
            assert getattr(ale, name) == getattr(pool, name), name
        assert sorted(ale.done_keys) == sorted(pool.done_keys)


def test_options_take_envpool_names_and_defaults():
    env = hub.make_env("ale:Pong-v5", num_envs=2, gray_scale=False, stack_num=2, img_height=64)
    assert env.observation_spec["observation"].shape == (2, 2, 64, 84, 3)
    args = env._vector_kwargs
    assert not args["reward_clipping"] and args["max_num_frames_per_episode"] == 27000 * 4
    with pytest.raises(TypeError, match="use_inter_area_resize"):
        hub.make_env("ale:Pong-v5", use_inter_area_resize=False)
    with pytest.raises(TypeError, match="no option 'grey'"):
        hub.make_env("ale:Pong-v5", grey=True)


def test_a_batch_gives_the_data_of_ale_pys_vector_env_seeded_alike():
    """hub's sub-env i seeded s is ale-py's sub-env i after reset(seed=s), and the episodes that
    end are reset as ale-py resets them (its masked reset), with no step lost or made up."""
    from ale_py.vector_env import AtariVectorEnv

    env = AleEnv("Pong-v5", 3, categorical_action_encoding=True, num_threads=1, **SHORT)
    raw = AtariVectorEnv(
        "pong", 3, num_threads=1, reward_clipping=False, max_num_frames_per_episode=160
    )
    rng = np.random.default_rng(0)
    td = env.reset(seed=5)
    obs, _ = raw.reset(seed=5)
    assert np.array_equal(td["observation"].numpy(), obs)
    ends = 0
    for _ in range(100):
        action = rng.integers(0, 6, 3)
        td["action"] = torch.as_tensor(action)
        td, next_td = env.step_and_maybe_reset(td)
        obs, reward, terminated, truncated, _ = raw.step(action)
        step = td["next"]
        assert np.array_equal(step["observation"].numpy(), obs)
        assert np.array_equal(step["reward"].squeeze(-1).numpy(), reward.astype(np.float32))
        assert np.array_equal(step["terminated"].squeeze(-1).numpy(), terminated)
        assert np.array_equal(step["truncated"].squeeze(-1).numpy(), truncated)
        done = terminated | truncated
        if done.any():
            ends += 1
            obs, _ = raw.reset(options={"reset_mask": done})
            assert np.array_equal(next_td["observation"].numpy(), obs)
            assert not next_td["done"].any()
        td = next_td
    assert ends >= 2
    env.close()


def test_the_step_after_an_end_is_a_real_step_of_the_new_episode():
    env = AleEnv("Pong-v5", 2, categorical_action_encoding=True, **SHORT)
    env.set_seed(0)
    data = env.rollout(120, break_when_any_done=False)
    done = data["next", "done"].squeeze(-1)
    assert done.any()
    env_id, t = (int(i) for i in done.nonzero()[0])
    # the reset's first frames, then a step from them: no frame of the old episode comes back
    first = data["observation"][env_id, t + 1]
    assert not torch.equal(first, data["next", "observation"][env_id, t])
    assert torch.equal(data["next", "observation"][env_id, t + 1][:-1], first[1:])


def test_stepping_an_ended_env_before_its_reset_is_refused():
    env = AleEnv("Pong-v5", 1, categorical_action_encoding=True, max_episode_steps=1)
    td = env.step(env.rand_action(env.reset(seed=0)))
    assert td["next", "truncated"].all()
    with pytest.raises(hub.errors.HubError, match="ended their episode"):
        env.step(env.rand_action(hub.step_mdp(td)))


def test_a_partial_reset_keeps_the_other_rows():
    env = AleEnv("Pong-v5", 2, categorical_action_encoding=True)
    td = env.reset(seed=1)
    for _ in range(5):
        td = hub.step_mdp(env.step(env.rand_action(td)))
    kept = td["observation"][1].clone()
    td["_reset"] = torch.tensor([[True], [False]])
    out = env.reset(td)
    assert torch.equal(out["observation"][1], kept)
    assert not torch.equal(out["observation"][0], kept)


def test_a_partial_step_is_refused_with_the_way_out():
    env = AleEnv("Pong-v5", 2, categorical_action_encoding=True)
    td = env.rand_action(env.reset(seed=0))
    td["_step"] = torch.tensor([True, False])
    with pytest.raises(hub.errors.HubError, match="no partial step"):
        env.step(td)


def test_an_unbatched_env():
    env = hub.make_env("ale:Breakout-v5", seed=0)
    assert env.batch_size == ()
    data = env.rollout(5)
    assert data["next", "observation"].shape == (5, 4, 84, 84)


def test_the_render_twin_plays_the_same_game():
    """The colour screens come from a second vector env given the same seeds and actions: it
    must report the same rewards, flags, lives and frame numbers (sticky actions on)."""
    env = AleEnv("Breakout-v5", 2, render_mode="rgb_array", repeat_action_probability=0.25)
    env.reset(seed=3)
    runner = env._runner
    rng = np.random.default_rng(0)
    for _ in range(150):
        action = rng.integers(0, runner.num_actions, 2).astype(np.int32)
        runner.ale.send(action, runner.paddle)
        runner.twin.send(action, runner.paddle)
        main, twin = runner.ale.recv(), runner.twin.recv()
        for a, b in zip(main[1:4], twin[1:4]):
            assert np.array_equal(a, b)
        for key in ("lives", "episode_frame_number"):
            assert np.array_equal(main[4][key], twin[4][key])
    assert twin[0].shape == (2, 1, RENDER_OPTIONS["img_height"], RENDER_OPTIONS["img_width"], 3)


def test_render_needs_render_mode_and_says_so():
    env = AleEnv("Pong-v5", 2)
    env.reset(seed=0)
    with pytest.raises(hub.errors.HubError, match="render_mode='rgb_array'"):
        env.render()
    env.set_render_mode("rgb_array")
    env.reset(seed=0)
    frames = env.render()
    assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8


def test_unknown_game_names_the_closest():
    with pytest.raises(hub.errors.UnknownEnvError, match="Pong-v5"):
        AleEnv("Pongg-v5")


def test_rollout_records_colour_frames(tmp_path):
    iio = pytest.importorskip("imageio.v3")
    from click.testing import CliRunner

    from hub.cli import cli

    out = tmp_path / "pong.gif"
    args = ["rollout", "ale:Pong-v5", "-n", "2", "-s", "3", "--seed", "0"]
    result = CliRunner().invoke(cli, [*args, "-k", "render_mode=rgb_array", "--record", str(out)])
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)[..., :3]
    field = frames[-1, 48 + 200 : 48 + 400, :320]
    assert (field[..., 0] != field[..., 2]).any()  # colour, not grey
