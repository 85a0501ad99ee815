"""The vector export against gymnasium 1.x's own vector behaviour.

The step-by-step expectations are those of gymnasium's repository tests (tests/vector/
test_autoreset_mode.py, test_vector_env.py, test_vector_env_info.py, test_vector_wrapper.py),
held here against ``to_gymnasium`` over hub envs. What does not apply, and why:

* AsyncVectorEnv / shared-memory variants and ``test_vector_env_equal`` (sync vs async): the
  export is one class; hub's batching (``batching="parallel"``) sits below it.
* ``np_random_seed`` as a tuple of per-sub-env seeds (``test_random_seeding_basics``) holds
  where the sub-envs are gymnasium envs of this process (``tests/export/test_drop_in.py``);
  for hub's own envs the export's ``np_random_seed`` is the int given to ``reset``.
* ``reset(seed=[...], options={"reset_mask": ...})`` (``test_partial_reset``): hub seeds whole
  envs; seeding a partial reset raises a clear error (tested below).
* A first reset with a partial mask fails in gymnasium; the export resets every sub-env then.
* Per-sub-env ``info`` entries (``test_final_obs_info``'s ``{"action": ...}``): hub envs put
  such data in the tensordict; the export's infos hold its ``("info", ...)`` entries (with
  their ``_key`` masks) and the ``final_obs``/``final_info`` entries of the autoreset modes.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")

from hub.export.vector import export_autoreset_mode  # noqa: E402
from tests.export.count_env import CountEnv  # noqa: E402

needs_modes = pytest.mark.skipif(
    not hasattr(gymnasium.vector, "AutoresetMode"), reason="autoreset modes: gymnasium >= 1.1"
)


def _count_env(mode=None):
    return hub.to_gymnasium(CountEnv([2, 3, 3]), autoreset_mode=mode)


def _steps(env, expected):
    for obs, rewards, terminations, info in expected:
        o, r, te, tr, i = env.step(np.array([1, 2, 3]))
        assert o.tolist() == obs and r.tolist() == rewards
        assert te.tolist() == terminations and not tr.any()
        if info is not None:
            assert i == info


@needs_modes
def test_next_step_is_the_default_and_follows_gymnasium() -> None:
    from gymnasium.vector import AutoresetMode

    env = _count_env()
    assert env.autoreset_mode == AutoresetMode.NEXT_STEP
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset()
    assert obs.tolist() == [0, 0, 0] and info == {}
    _steps(
        env,
        [
            ([1, 1, 1], [1, 2, 3], [False, False, False], {}),
            ([2, 2, 2], [1, 2, 3], [True, False, False], {}),
            ([0, 3, 3], [0, 2, 3], [False, True, True], {}),
            ([1, 0, 0], [1, 0, 0], [False, False, False], {}),
        ],
    )
    # the restarted sub-envs were not stepped in the steps that reset them
    assert env.hub_env.steps.tolist() == [3, 3, 3]


@needs_modes
def test_same_step_follows_gymnasium() -> None:
    from gymnasium.utils.env_checker import data_equivalence
    from gymnasium.vector import AutoresetMode

    env = _count_env(AutoresetMode.SAME_STEP)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset()
    assert obs.tolist() == [0, 0, 0] and info == {}
    _steps(env, [([1, 1, 1], [1, 2, 3], [False, False, False], {})])
    expectations = [
        ([0, 2, 2], [True, False, False], [2, None, None]),
        ([1, 0, 0], [False, True, True], [None, 3, 3]),
        ([0, 1, 1], [True, False, False], [2, None, None]),
    ]
    for obs, terminations, finals in expectations:
        o, r, te, tr, info = env.step(np.array([1, 2, 3]))
        assert o.tolist() == obs and r.tolist() == [1, 2, 3] and te.tolist() == terminations
        mask = np.array([f is not None for f in finals])
        assert data_equivalence(
            {k: v for k, v in info.items() if k != "final_obs"},
            {"final_info": {}, "_final_obs": mask, "_final_info": mask},
        )
        assert [None if f is None else int(f) for f in info["final_obs"]] == finals
        for i in np.flatnonzero(mask):
            assert info["final_obs"][i] in env.single_observation_space


@needs_modes
def test_disabled_follows_gymnasium() -> None:
    from gymnasium.vector import AutoresetMode

    env = _count_env(AutoresetMode.DISABLED)
    assert env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    assert env.reset()[0].tolist() == [0, 0, 0]
    _steps(
        env,
        [
            ([1, 1, 1], [1, 2, 3], [False, False, False], {}),
            ([2, 2, 2], [1, 2, 3], [True, False, False], {}),
        ],
    )
    obs, info = env.reset(options={"reset_mask": np.array([True, False, False])})
    assert obs.tolist() == [0, 2, 2] and info == {}
    _steps(env, [([1, 3, 3], [1, 2, 3], [False, True, True], {})])
    obs, info = env.reset(options={"reset_mask": np.array([False, True, True])})
    assert obs.tolist() == [1, 0, 0] and info == {}
    _steps(env, [([2, 1, 1], [1, 2, 3], [True, False, False], {})])
    with pytest.raises(hub.errors.HubError, match="reset_mask"):
        env.step(np.array([1, 2, 3]))  # sub-env 0 ended and was not reset


@needs_modes
@pytest.mark.parametrize("name", ["NEXT_STEP", "SAME_STEP", "DISABLED"])
def test_autoreset_mode_by_member_or_value(name: str) -> None:
    from gymnasium.vector import AutoresetMode

    mode = getattr(AutoresetMode, name)
    for given in (mode, mode.value):
        env = _count_env(given)
        assert env.metadata["autoreset_mode"] == mode and env.autoreset_mode == mode
    with pytest.raises(hub.errors.HubError, match="AutoresetMode"):
        _count_env("sometimes")


def test_reset_mask_resets_only_the_marked_sub_envs() -> None:
    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=4))
    first, _ = env.reset(seed=0)
    for _ in range(3):
        stepped, *_ = env.step(np.ones(4, dtype=np.int64))
    mask = np.array([True, False, True, False])
    obs, info = env.reset(options={"reset_mask": mask})
    assert info == {}
    assert np.array_equal(obs[~mask], stepped[~mask])
    assert not np.array_equal(obs[mask], stepped[mask])
    assert (np.abs(obs[mask]) <= 0.05).all()  # CartPole's first observations


def test_reset_mask_is_checked_as_gymnasium_does() -> None:
    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=3))
    env.reset(options={"reset_mask": np.array([True, True, True])})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.array([True])})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.array([[True, True, True]])})
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": np.array([1, 1, 0])})
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": [True, True, False]})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.zeros(3, dtype=bool)})
    with pytest.raises(hub.errors.HubError, match="seed"):
        env.reset(seed=1, options={"reset_mask": np.array([True, False, True])})


def test_seeds_give_the_raw_vector_envs_first_observations() -> None:
    def raw():
        return gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 4)

    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=4))
    seeds = [1, 2, 3, 4]
    assert np.array_equal(env.reset(seed=seeds)[0], raw().reset(seed=seeds)[0])
    assert np.array_equal(env.reset(seed=7)[0], raw().reset(seed=7)[0])
    again = env.reset(seed=[5, 9, 5, 9])[0]
    assert np.array_equal(again[0], again[2]) and not np.array_equal(again[0], again[1])
    with pytest.raises(ValueError, match="length"):
        env.reset(seed=[1, 2])


def test_seed_lists_where_hub_derives_the_seeds() -> None:
    env = hub.to_gymnasium(hub.make_env("hub:Counting", num_envs=2, batching="serial"))
    env.reset(seed=[None, None])
    with pytest.raises(hub.errors.HubError, match="one seed"):
        env.reset(seed=[1, 5])


def _wrapped(env):
    from gymnasium.wrappers import vector as wrappers

    env = wrappers.RecordEpisodeStatistics(env)
    env = wrappers.NormalizeObservation(env)
    env = wrappers.NormalizeReward(env)
    env = wrappers.TransformObservation(env, lambda obs: obs * 2.0, env.observation_space)
    env = wrappers.ClipReward(env, min_reward=-0.5, max_reward=0.5)
    return wrappers.DictInfoToList(env)


def _run(env, steps: int = 60):
    """The wrapped env's outputs, step by step; an error ends the list (as its last item)."""
    out = [env.reset(seed=0)]
    try:
        for _ in range(steps):
            out.append(env.step(np.zeros(3, dtype=np.int64)))
    except Exception as exc:  # noqa: BLE001 - the same error is expected of both envs
        out.append(exc)
    return out


@needs_modes
def test_gymnasium_vector_wrappers_run_on_the_export_as_on_sync_vector_env() -> None:
    """The stack of gymnasium's vector wrappers gives the same data over the export as over
    ``SyncVectorEnv``. (gymnasium 1.1's ``DictInfoToList`` cannot read the ``"episode"`` dict
    of its own ``RecordEpisodeStatistics``, which has no ``"_r"`` masks: both envs then fail
    at the first episode end with the same ``KeyError``; 1.2 fixed it.)"""
    raw = _run(
        _wrapped(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3))
    )
    mine = _run(_wrapped(hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=3))))
    assert len(mine) == len(raw)
    for want, have in zip(raw, mine):
        if isinstance(want, Exception):
            assert type(have) is type(want) and str(have) == str(want)
            continue
        for w, h in zip(want[:-1], have[:-1]):
            np.testing.assert_allclose(h, w, rtol=1e-6)
        assert [sorted(i) for i in have[-1]] == [sorted(i) for i in want[-1]]
        for w, h in zip(want[-1], have[-1]):
            if "episode" in w:
                assert (
                    h["episode"]["l"] == w["episode"]["l"]
                    and h["episode"]["r"] == w["episode"]["r"]
                )
    episodes = sum("episode" in i for step in mine if isinstance(step, tuple) for i in step[-1])
    assert episodes > 0 or isinstance(raw[-1], KeyError)


@pytest.mark.skipif(importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed")
def test_dict_info_to_list_reads_the_exports_infos() -> None:
    from gymnasium.wrappers.vector import DictInfoToList

    env = hub.make_env("envpool:Breakout-v5", num_envs=2, infos=["lives"])
    env = DictInfoToList(hub.to_gymnasium(env))
    _, infos = env.reset(seed=0)
    assert infos == [{"lives": 5}, {"lives": 5}]
    *_, infos = env.step(np.zeros(2, dtype=np.int64))
    assert [info["lives"] for info in infos] == [5, 5]


@needs_modes
def test_record_episode_statistics_counts_real_episodes() -> None:
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(hub.to_gymnasium(CountEnv([2, 3, 3])))
    env.reset()
    lengths = []
    for _ in range(6):
        *_, info = env.step(np.array([1, 1, 1]))
        if "episode" in info:
            lengths.extend(info["episode"]["l"][info["_episode"]].tolist())
    assert lengths and set(lengths) <= {2, 3}


def test_vector_export_with_several_observation_keys_gives_a_dict_space() -> None:
    env = hub.to_gymnasium(
        hub.make_env("hub:Pendulum", num_envs=2, batching="serial"),
        observation_keys=["observation", "th"],
    )
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"observation", "th"} and obs["observation"].shape == (2, 3)
    assert obs in env.observation_space


@pytest.mark.skipif(importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed")
@pytest.mark.skipif(
    export_autoreset_mode() != "next_step", reason="next-step autoreset: gymnasium >= 1.0"
)
def test_vector_export_of_envpool_has_real_episodes() -> None:
    env = hub.to_gymnasium(hub.make_env("envpool:CartPole-v1", num_envs=3))
    env.reset(seed=0)
    restarting = np.zeros(3, dtype=bool)
    ends = 0
    for _ in range(80):
        obs, reward, terminated, truncated, _ = env.step(np.zeros(3, dtype=np.int64))
        assert (reward[restarting] == 0).all() and (reward[~restarting] == 1).all()
        restarting = terminated | truncated
        ends += int(restarting.sum())
    assert ends > 0
    env.close()
