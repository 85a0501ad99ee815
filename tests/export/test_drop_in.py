"""The exports in the places of the objects they stand in for, with code written for those
objects: gymnasium's and SB3's Atari wrappers around the single export of an ALE env, the
``info`` entries CleanRL's EnvPool scripts read, and the vector export beside gymnasium's
``SyncVectorEnv`` in each autoreset mode (the same data, step for step, for the same seed)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")

needs_ale = pytest.mark.skipif(
    importlib.util.find_spec("ale_py") is None or importlib.util.find_spec("cv2") is None,
    reason="ale-py and opencv are installed with gymnasium >= 1.1 (tox gymnasium11...)",
)
needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed"
)
needs_modes = pytest.mark.skipif(
    not hasattr(gymnasium.vector, "AutoresetMode"), reason="autoreset modes: gymnasium >= 1.1"
)


def _ale(uri_id: str):
    import ale_py

    gymnasium.register_envs(ale_py)
    raw = gymnasium.make(uri_id, frameskip=1)
    return raw, hub.to_gymnasium(hub.make_env(f"gymnasium:{uri_id}", frameskip=1))


def _same_steps(raw, env, actions, seed: int) -> None:
    want, _ = raw.reset(seed=seed)
    have, _ = env.reset(seed=seed)
    np.testing.assert_array_equal(have, want)
    for action in actions:
        want = raw.step(int(action))
        have = env.step(int(action))
        np.testing.assert_array_equal(have[0], want[0])
        assert have[1:4] == want[1:4]
        if want[2] or want[3]:
            np.testing.assert_array_equal(env.reset()[0], raw.reset()[0])


@needs_ale
def test_gymnasium_atari_preprocessing_wraps_the_ale_export() -> None:
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    raw, env = _ale("ALE/Breakout-v5")
    assert env.unwrapped.get_action_meanings() == raw.unwrapped.get_action_meanings()
    assert env.unwrapped._frameskip == 1 and env.spec.id == "ALE/Breakout-v5"

    def wrap(e):
        return FrameStackObservation(AtariPreprocessing(e, frame_skip=4, noop_max=30), 4)

    actions = np.random.default_rng(0).integers(0, 4, size=150)
    _same_steps(wrap(raw), wrap(env), actions, seed=3)
    with pytest.raises(ValueError, match="frame-skipping"):  # as over the raw env
        AtariPreprocessing(hub.to_gymnasium(hub.make_env("gymnasium:ALE/Breakout-v5")))


@needs_ale
def test_sb3_atari_wrapper_wraps_the_ale_export() -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.atari_wrappers import AtariWrapper

    raw, env = _ale("ALE/Breakout-v5")
    actions = np.where(np.arange(150) % 7 == 0, 3, 1)
    _same_steps(AtariWrapper(raw), AtariWrapper(env), actions, seed=1)


@needs_envpool
def test_envpool_infos_reach_every_export() -> None:
    import envpool

    kwargs = {"episodic_life": True, "reward_clip": True, "seed": 1}
    raw = envpool.make("Breakout-v5", env_type="gymnasium", num_envs=2, **kwargs)
    env = hub.make_env("envpool:Breakout-v5", num_envs=2, infos=["lives", "reward"], **kwargs)
    assert set(env.observation_spec["info"].keys()) == {"lives", "reward"}
    venv = hub.to_gymnasium(env)
    _, want = raw.reset()
    _, have = venv.reset()
    np.testing.assert_array_equal(have["lives"], want["lives"])
    assert have["_lives"].all()
    for _ in range(30):
        action = np.ones(2, dtype=np.int64)
        *_, want = raw.step(action)
        *_, have = venv.step(action)
        for name in ("lives", "reward"):
            np.testing.assert_array_equal(have[name], want[name])
    sb3 = pytest.importorskip("stable_baselines3")
    del sb3
    venv = hub.to_sb3(hub.make_env("envpool:Breakout-v5", num_envs=2, infos=True))
    venv.reset()
    infos = venv.step(np.ones(2, dtype=np.int64))[3]
    assert {"lives", "reward", "terminated"} <= set(infos[0])
    with pytest.raises(hub.errors.HubError, match="no info array"):
        hub.make_env("envpool:Breakout-v5", num_envs=2, infos=["colour"])


def _record_episode_statistics(envs):
    """The episode bookkeeping of CleanRL's ppo_atari_envpool.py (its RecordEpisodeStatistics),
    on the vector API: it reads infos "reward" and "terminated" on every step."""
    returns = np.zeros(envs.num_envs, dtype=np.float32)
    envs.reset(seed=1)
    ended = []
    for _ in range(200):
        *_, infos = envs.step(np.ones(envs.num_envs, dtype=np.int64))
        returns += infos["reward"]
        ended.extend(returns[infos["terminated"].astype(bool)].tolist())
        returns *= 1 - infos["terminated"]
    return ended


@needs_envpool
def test_cleanrl_envpool_bookkeeping_runs_on_the_export() -> None:
    env = hub.make_env("envpool:Pong-v5", num_envs=2, infos=True, episodic_life=True)
    ended = _record_episode_statistics(hub.to_gymnasium(env))
    assert isinstance(ended, list)


@pytest.mark.parametrize("mode", ["NEXT_STEP", "SAME_STEP", "DISABLED"])
def test_vector_export_equals_sync_vector_env(mode: str) -> None:
    """Each mode the installed gymnasium has: all three from 1.1, NEXT_STEP on 1.0, SAME_STEP
    (its ``final_observation`` infos) before 1.0."""
    from hub.export.vector import export_autoreset_mode

    kwargs: dict = {}
    if hasattr(gymnasium.vector, "AutoresetMode"):
        kwargs["autoreset_mode"] = getattr(gymnasium.vector.AutoresetMode, mode)
    elif mode.lower() != export_autoreset_mode():
        pytest.skip(f"gymnasium {gymnasium.__version__} has one autoreset mode")
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 4, **kwargs)
    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=4), **kwargs)
    want, _ = raw.reset(seed=3)
    have, _ = env.reset(seed=3)
    np.testing.assert_array_equal(have, want)
    final = "final_observation" if gymnasium.__version__ < "1" else "final_obs"
    ends = 0
    for action in np.random.default_rng(0).integers(0, 2, size=(300, 4)):
        want, have = raw.step(action), env.step(action)
        for w, h in zip(want[:4], have[:4]):
            np.testing.assert_array_equal(h, w)
        assert set(have[4]) == set(want[4])
        if final in want[4]:
            np.testing.assert_array_equal(have[4]["_" + final], want[4]["_" + final])
            for w, h, m in zip(want[4][final], have[4][final], want[4]["_" + final]):
                if m:
                    np.testing.assert_array_equal(h, w)
        done = want[2] | want[3]
        ends += int(done.sum())
        if mode == "DISABLED" and done.any():
            want, _ = raw.reset(options={"reset_mask": done})
            have, _ = env.reset(options={"reset_mask": done})
            np.testing.assert_array_equal(have, want)
    assert ends > 20


def test_vector_api_as_gymnasium() -> None:
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=3))
    for venv in (raw, env):
        venv.reset(seed=0)
        assert venv.get_attr("gravity") == (9.8, 9.8, 9.8)
        venv.set_attr("gravity", [1.0, 2.0, 3.0])
        assert venv.call("gravity") == (1.0, 2.0, 3.0)  # an attribute: its value
        venv.set_attr("gravity", 4.0)
        assert venv.get_attr("gravity") == (4.0,) * 3
        with pytest.raises(ValueError):
            venv.set_attr("gravity", [1.0])
        assert venv.metadata["render_fps"] == 50
        assert venv.unwrapped is venv
    assert env.spec.id == "CartPole-v1"
    assert type(env.np_random) is type(raw.np_random)  # the sub-envs' generators (1.x: a tuple)
    if isinstance(raw.np_random, tuple):
        env.reset(seed=7), raw.reset(seed=7)
        assert env.np_random_seed == raw.np_random_seed == (7, 8, 9)
        for mine, theirs in zip(env.np_random, raw.np_random):
            assert mine.bit_generator.state == theirs.bit_generator.state


@pytest.mark.skipif(gymnasium.__version__ < "1", reason="SyncVectorEnv's bookkeeping of 1.x")
def test_step_rows_leaves_the_other_sub_envs_untouched() -> None:
    from hub_gym.row_steps import can_step_rows, step_rows

    env = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    assert can_step_rows(env, "next_step") and not can_step_rows(env, "same_step")
    first, _ = env.reset(seed=0)
    states = [e.unwrapped.state.copy() for e in env.envs]
    obs, reward, terminated, truncated, _ = step_rows(
        env, np.array([1, 1, 1]), np.array([True, False, True])
    )
    np.testing.assert_array_equal(obs[1], first[1])
    assert reward.tolist() == [1.0, 0.0, 1.0] and not terminated.any() and not truncated.any()
    np.testing.assert_array_equal(env.envs[1].unwrapped.state, states[1])
    assert not np.array_equal(env.envs[0].unwrapped.state, states[0])
