"""What the counter, reward, cast, clipping and normalisation transforms compute."""

from __future__ import annotations

import pytest
import torch

import hub
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.errors import HubError
from hub.specs import Binary, Bounded, Unbounded
from hub.transforms import (
    BinarizeReward,
    ClipTransform,
    Compose,
    DeviceCastTransform,
    DoubleToFloat,
    DTypeCastTransform,
    ObservationNorm,
    RewardClipping,
    RewardScaling,
    RewardSum,
    SignTransform,
    StepCounter,
    Timer,
    TrajCounter,
    TransformedEnv,
    VecNorm,
)


def ones(td):
    return td.set("action", torch.ones_like(td["observation"]))


def pendulum():
    env = PendulumEnv()
    env.set_seed(0)
    return env


def test_step_counter_truncation_ends_episodes_and_restarts_the_count():
    env = TransformedEnv(CountingEnv(max_steps=100), StepCounter(max_steps=3))
    data = env.rollout(7, break_when_any_done=False)
    assert data["next", "step_count"].squeeze(-1).tolist() == [1, 2, 3, 1, 2, 3, 1]
    assert data["next", "truncated"].squeeze(-1).tolist() == [0, 0, 1, 0, 0, 1, 0]
    assert data["next", "terminated"].sum() == 0
    assert env.observation_spec["step_count"] == Bounded(0, 3, shape=(1,), dtype=torch.int64)


def test_step_counter_without_update_done_only_flags_truncation():
    env = TransformedEnv(CountingEnv(max_steps=100), StepCounter(max_steps=2, update_done=False))
    data = env.rollout(3)
    assert data["next", "truncated"].squeeze(-1).tolist() == [False, True, True]
    assert not bool(data["next", "done"].any())


def test_traj_counter_gives_unique_ids_across_sub_envs():
    env = TransformedEnv(
        hub.SerialEnv(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 3}]), TrajCounter()
    )
    data = env.rollout(6, break_when_any_done=False)
    ids = data["next", "traj_count"].squeeze(-1).tolist()
    assert ids == [[0, 0, 2, 2, 4, 4], [1, 1, 1, 3, 3, 3]]
    assert env.transform.state_dict() == {"next_id": 5}


def test_timer_measures_steps_and_resets():
    env = TransformedEnv(CountingEnv(), Timer())
    data = env.rollout(3)
    assert bool((data["next", "time_step"] > 0).all())
    assert bool((data["time_reset"] > 0).all())
    assert data["next", "time_step"].dtype == torch.float64


def test_reward_sum_sums_and_resets():
    env = TransformedEnv(CountingEnv(max_steps=2), RewardSum())
    data = env.rollout(4, policy=ones, break_when_any_done=False)
    assert data["next", "episode_reward"].squeeze(-1).tolist() == [1.0, 2.0, 1.0, 2.0]
    assert data["episode_reward"].squeeze(-1).tolist() == [0.0, 1.0, 0.0, 1.0]


def test_reward_sum_with_explicit_keys():
    env = TransformedEnv(CountingEnv(), RewardSum(in_keys=["reward"], out_keys=["total"]))
    assert env.rollout(2, policy=ones)["next", "total"].squeeze(-1).tolist() == [1.0, 2.0]
    with pytest.raises(KeyError, match="not a reward"):
        TransformedEnv(CountingEnv(), RewardSum(in_keys=["nope"]))


def test_reward_scaling_maps_values_and_bounds():
    env = TransformedEnv(CountingEnv(), RewardScaling(loc=1.0, scale=-2.0))
    assert env.rollout(2, policy=ones)["next", "reward"].squeeze(-1).tolist() == [-1.0, -1.0]
    base = CountingEnv()
    base.reward_spec = Bounded(0.0, 1.0, shape=(1,))
    spec = TransformedEnv(base, RewardScaling(loc=1.0, scale=-2.0)).reward_spec
    assert spec == Bounded(-1.0, 1.0, shape=(1,))
    norm = TransformedEnv(CountingEnv(), RewardScaling(1.0, 2.0, standard_normal=True))
    assert norm.rollout(1, policy=ones)["next", "reward"].tolist() == [[0.0]]
    with pytest.raises(ValueError, match="non-zero"):
        RewardScaling(scale=0.0)


def test_binarize_clip_and_sign():
    env = TransformedEnv(CountingEnv(), BinarizeReward())
    assert isinstance(env.reward_spec, Binary)
    assert env.rollout(1, policy=ones)["next", "reward"].tolist() == [[1]]
    clipped = TransformedEnv(pendulum(), RewardClipping(clamp_min=-0.5))
    assert bool((clipped.rollout(10)["next", "reward"] >= -0.5).all())
    assert clipped.reward_spec.low.item() == -0.5
    sign = TransformedEnv(pendulum(), SignTransform(in_keys=["observation"]))
    assert set(sign.rollout(5)["next", "observation"].unique().tolist()) <= {-1.0, 0.0, 1.0}


def test_clip_transform_clips_actions_on_the_way_in():
    seen = []

    class Spy(PendulumEnv):
        def _step(self, td):
            seen.append(td["action"].clone())
            return super()._step(td)

    env = TransformedEnv(Spy(), ClipTransform(in_keys_inv=["action"], low=-0.1, high=0.1))
    assert env.action_spec == Bounded(-0.1, 0.1, shape=(1,))
    td = env.reset().set("action", torch.tensor([2.0]))
    env.step(td)
    assert seen[-1].tolist() == pytest.approx([0.1])
    with pytest.raises(ValueError):
        ClipTransform(in_keys=["x"])


def test_double_to_float_casts_outputs_and_inputs():
    inner = TransformedEnv(pendulum(), DTypeCastTransform(torch.float32, torch.float64))
    assert inner.observation_spec["observation"].dtype == torch.float64
    assert inner.state_spec["th"].dtype == torch.float64
    env = inner.append_transform(DoubleToFloat())
    data = env.rollout(3)
    for key in ("observation", "th", "thdot"):
        assert data["next", key].dtype == torch.float32
        assert env.observation_spec[key].dtype == torch.float32
    assert data["next", "reward"].dtype == torch.float32
    assert env.action_spec.dtype == torch.float32
    assert env.state_spec["th"].dtype == torch.float32
    hub.check_env_specs(env)


def test_dtype_cast_explicit_keys_only_touch_those():
    env = TransformedEnv(
        CountingEnv(), DTypeCastTransform(torch.int64, torch.float64, in_keys=["observation"])
    )
    assert env.observation_spec["observation"].dtype == torch.float64
    assert env.action_spec.dtype == torch.int64
    assert env.rollout(2)["next", "observation"].dtype == torch.float64


def test_device_cast_moves_data_and_specs():
    env = TransformedEnv(CountingEnv(), DeviceCastTransform("cpu"))
    assert env.device == torch.device("cpu")
    assert env.observation_spec.device == torch.device("cpu")
    assert env.rollout(2)["next", "observation"].device == torch.device("cpu")


def test_observation_norm_init_stats_standardises():
    env = TransformedEnv(CountingEnv(max_steps=4), ObservationNorm())
    with pytest.raises(HubError, match="init_stats"):
        env.rollout(2)
    env.transform.init_stats(8)
    obs = env.rollout(8, break_when_any_done=False)["next", "observation"]
    assert obs.dtype == torch.float32
    assert obs.mean().item() == pytest.approx(0.0, abs=1e-6)
    assert obs.std().item() == pytest.approx(1.0, abs=1e-6)
    assert isinstance(env.observation_spec["observation"], Bounded)
    hub.check_env_specs(env)
    pend = TransformedEnv(pendulum(), ObservationNorm(in_keys=["observation"]))
    pend.transform.init_stats(50)
    assert pend.transform.loc.shape == (3,) and pend.transform.scale.shape == (3,)
    hub.check_env_specs(pend)


def test_observation_norm_inverse_on_actions():
    seen = []

    class Spy(PendulumEnv):
        def _step(self, td):
            seen.append(td["action"].clone())
            return super()._step(td)

    norm = ObservationNorm(
        loc=torch.tensor(1.0), scale=torch.tensor(2.0), in_keys=[], in_keys_inv=["action"]
    )
    env = TransformedEnv(Spy(), norm)
    assert env.action_spec == Bounded(-3.0, 5.0, shape=(1,))
    env.step(env.reset().set("action", torch.tensor([3.0])))
    assert seen[-1].tolist() == [1.0]  # (3 - 1) / 2


def test_vec_norm_normalises_and_freezes():
    env = TransformedEnv(pendulum(), VecNorm(decay=1.0))
    assert isinstance(env.observation_spec["observation"], Unbounded)
    data = env.rollout(200, break_when_any_done=False)
    late = data["next", "observation"][100:]
    assert late.mean(0).abs().max() < 1.0
    state = env.transform.state_dict()
    count = state["observation"]["count"].item()
    env.transform.freeze()
    env.rollout(5)
    assert env.transform.state_dict()["observation"]["count"].item() == count
    fixed = env.transform.to_observation_norm()
    assert isinstance(fixed, ObservationNorm) and fixed.standard_normal
    other = VecNorm()
    other.load_state_dict(state)
    assert other.state_dict()["observation"]["count"].item() == count


def test_vec_norm_on_a_batched_env_reduces_over_the_batch():
    env = TransformedEnv(hub.SerialEnv(3, PendulumEnv), Compose(VecNorm(decay=1.0), StepCounter()))
    env.rollout(4)
    stats = env.transform[0].state_dict()["observation"]
    assert stats["sum"].shape == (3,)
    assert stats["count"].item() == pytest.approx(3 * 5)
