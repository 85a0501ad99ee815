"""Image, shape and time transforms: values, specs, partial resets and steps."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import hub
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.specs import Bounded
from hub.transforms import (
    CatFrames,
    CatTensors,
    CenterCrop,
    Compose,
    EndOfLifeTransform,
    FlattenObservation,
    FrameSkipTransform,
    GrayScale,
    NoopResetEnv,
    PermuteTransform,
    Resize,
    RewardSum,
    SqueezeTransform,
    StepCounter,
    TimeMaxPool,
    ToTensorImage,
    TransformedEnv,
    UnsqueezeTransform,
)

from .transform_envs import Lives


def ones(td):
    return td.set("action", torch.ones_like(td["observation"]))


def test_seed_example_pixels_to_tensor_and_resize_with_parent():
    base_env = PendulumEnv(from_pixels=True)
    transform = Compose(ToTensorImage(in_keys=["pixels"]), Resize(64, 64, in_keys=["pixels"]))
    env = TransformedEnv(base_env, transform)
    pixels = env.reset()["pixels"]
    assert pixels.shape == (3, 64, 64) and pixels.dtype == torch.float32
    resize_parent = env.transform[-1].parent
    same = TransformedEnv(base_env, transform[:-1])
    assert resize_parent.observation_spec == same.observation_spec
    assert resize_parent.observation_spec["pixels"].shape == (3, 64, 64)
    resized = TransformedEnv(PendulumEnv(from_pixels=True), Compose(ToTensorImage(), Resize(32)))
    assert resized.observation_spec["pixels"].shape == (3, 32, 32)
    hub.check_env_specs(resized)


def test_to_tensor_image_scales_and_permutes():
    image = torch.randint(0, 256, (2, 5, 4, 3), dtype=torch.uint8)
    out = ToTensorImage()._apply_transform(image)
    assert out.shape == (2, 3, 5, 4)
    torch.testing.assert_close(out[1, 2, 3, 1], image[1, 3, 1, 2].float() / 255)
    spec = ToTensorImage()._transform_spec(Bounded(0, 255, shape=(5, 4, 3), dtype=torch.uint8))
    assert spec == Bounded(0.0, 1.0, shape=(3, 5, 4))
    assert ToTensorImage(unsqueeze=True)._apply_transform(image[0]).shape == (1, 3, 5, 4)


def test_resize_crop_and_grayscale_values():
    image = torch.arange(16.0).reshape(1, 1, 4, 4).expand(1, 3, 4, 4)
    nearest = Resize(2, 2, interpolation="nearest")._apply_transform(image)
    assert nearest.shape == (1, 3, 2, 2)
    area = Resize(2, 2, interpolation="area")._apply_transform(image)
    assert area[0, 0].tolist() == [[2.5, 4.5], [10.5, 12.5]]
    uint8 = Resize(2, interpolation="area")._apply_transform(image.to(torch.uint8))
    assert uint8.dtype == torch.uint8 and uint8[0, 0].tolist() == [[2, 4], [10, 12]]
    rgb = torch.tensor([1.0, 0.5, 0.25]).reshape(3, 1, 1).expand(3, 2, 2)
    gray = GrayScale()._apply_transform(rgb)
    assert gray.shape == (1, 2, 2)
    assert gray[0, 0, 0].item() == pytest.approx(0.2989 + 0.587 * 0.5 + 0.114 * 0.25, abs=1e-4)
    with pytest.raises(ValueError, match="3 channels"):
        GrayScale()._apply_transform(torch.zeros(4, 2, 2))
    with pytest.raises(ValueError, match="larger"):
        CenterCrop(5)._apply_transform(torch.zeros(1, 4, 4))
    with pytest.raises(ValueError, match="interpolation"):
        Resize(4, interpolation="lanczos")


def test_shape_transforms_forward_and_inverse():
    x = torch.arange(24.0).reshape(2, 3, 4)
    unsq = UnsqueezeTransform(-1, in_keys=["x"])
    assert unsq._apply_transform(x).shape == (2, 3, 4, 1)
    assert unsq._inv_apply_transform(unsq._apply_transform(x)).shape == x.shape
    sq = SqueezeTransform(-1, in_keys=["x"])
    with pytest.raises(ValueError, match="size 1"):
        sq._apply_transform(x)
    perm = PermuteTransform((-1, -3, -2), in_keys=["x"])
    assert perm._apply_transform(x).shape == (4, 2, 3)
    torch.testing.assert_close(perm._inv_apply_transform(perm._apply_transform(x)), x)
    assert FlattenObservation(-2, -1, in_keys=["x"])._apply_transform(x).shape == (2, 12)
    with pytest.raises(ValueError, match="from the end"):
        UnsqueezeTransform(1, in_keys=["x"])
    with pytest.raises(ValueError, match="reordering"):
        PermuteTransform((-1, -1))


def test_unsqueeze_on_actions_changes_the_action_spec_both_ways():
    env = TransformedEnv(
        PendulumEnv(), UnsqueezeTransform(-1, in_keys_inv=["action"], out_keys_inv=["action"])
    )
    assert env.action_spec.shape == (1, 1)
    data = env.rollout(3)
    assert data["action"].shape == (3, 1, 1)


def test_cat_tensors_concatenates_in_sorted_order_and_bounds():
    env = TransformedEnv(
        PendulumEnv(), CatTensors(["thdot", "observation"], "vector", del_keys=False)
    )
    td = env.reset()
    torch.testing.assert_close(td["vector"], torch.cat([td["observation"], td["thdot"]], -1))
    assert isinstance(env.observation_spec["vector"], Bounded)
    dropped = TransformedEnv(CountingEnv(), CatTensors(["observation"], "obs2"))
    assert "observation" not in dropped.observation_keys
    assert dropped.rollout(2)["next", "obs2"].squeeze(-1).tolist() == [1, 2]


def test_cat_frames_stacks_and_pads():
    env = TransformedEnv(CountingEnv(max_steps=10), CatFrames(3, dim=-1, in_keys=["observation"]))
    data = env.rollout(3)
    assert data["observation"].tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 2]]
    assert data["next", "observation"].tolist() == [[0, 0, 1], [0, 1, 2], [1, 2, 3]]
    constant = TransformedEnv(
        CountingEnv(max_steps=10),
        CatFrames(3, dim=-1, in_keys=["observation"], padding="constant", padding_value=-1),
    )
    assert constant.reset()["observation"].tolist() == [-1, -1, 0]
    assert constant.observation_spec["observation"].low.tolist() == [-1, -1, -1]
    with pytest.raises(ValueError, match="from the end"):
        CatFrames(4, dim=1)


def test_cat_frames_partial_reset_and_partial_step():
    # SerialEnv really skips the sub-envs left out of a partial step (CountingEnv alone would
    # count on internally and only mask its outputs)
    env = TransformedEnv(
        hub.SerialEnv(2, CountingEnv, {"max_steps": 100}),
        CatFrames(2, dim=-1, in_keys=["observation"], out_keys=["frames"]),
    )
    td = env.reset()
    for _ in range(2):
        td = env.step_mdp(env.step(ones(td)))
    assert td["frames"].tolist() == [[1, 2], [1, 2]]
    td["_reset"] = torch.tensor([[True], [False]])
    td = env.reset(td)
    assert td["frames"].tolist() == [[0, 0], [1, 2]]
    td = ones(td)
    td["_step"] = torch.tensor([False, True])
    out = env.step(td)
    assert out["next", "frames"].tolist() == [[0, 0], [2, 3]]
    td = env.step_mdp(out.exclude("_step"))
    assert env.step(ones(td))["next", "frames"].tolist() == [[0, 1], [3, 4]]


def test_cat_frames_images_in_a_batched_env():
    env = TransformedEnv(
        hub.SerialEnv(2, PendulumEnv, {"from_pixels": True, "pixels_size": 16}),
        Compose(ToTensorImage(), GrayScale(), CatFrames(4, dim=-3)),
    )
    data = env.rollout(3)
    assert data["next", "pixels"].shape == (2, 3, 4, 16, 16)
    hub.check_env_specs(env)


def test_time_max_pool_takes_the_max_of_the_last_frames():
    env = TransformedEnv(
        CountingEnv(max_steps=3),
        TimeMaxPool(in_keys=["observation"], out_keys=["pooled"], T=2),
    )
    data = env.rollout(5, break_when_any_done=False)
    assert data["next", "pooled"].squeeze(-1).tolist() == [1, 2, 3, 1, 2]
    assert data["pooled"].squeeze(-1).tolist() == [0, 1, 2, 0, 1]


def test_frame_skip_repeats_actions_and_sums_rewards():
    env = TransformedEnv(CountingEnv(max_steps=7), Compose(FrameSkipTransform(3), RewardSum()))
    data = env.rollout(5, policy=ones)
    assert data["next", "observation"].squeeze(-1).tolist() == [3, 6, 7]
    assert data["next", "reward"].squeeze(-1).tolist() == [3.0, 3.0, 1.0]
    assert data["next", "episode_reward"].squeeze(-1).tolist() == [3.0, 6.0, 7.0]
    batched = TransformedEnv(
        hub.SerialEnv(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 9}]),
        FrameSkipTransform(3),
    )
    out = batched.step(ones(batched.reset()))["next"]
    assert out["observation"].squeeze(-1).tolist() == [2, 3]
    assert out["reward"].squeeze(-1).tolist() == [2.0, 3.0]
    assert out["done"].squeeze(-1).tolist() == [True, False]
    with pytest.raises(ValueError):
        FrameSkipTransform(0)


def test_frame_skip_on_a_stateless_env():
    env = TransformedEnv(PendulumEnv(), Compose(FrameSkipTransform(4), StepCounter()))
    data = env.rollout(3)
    assert data["next", "th"].shape == (3, 1)
    assert data["next", "step_count"].squeeze(-1).tolist() == [1, 2, 3]


def test_noop_reset_steps_after_reset():
    env = TransformedEnv(CountingEnv(max_steps=100), NoopResetEnv(noops=5, random=False))
    assert env.reset()["observation"].tolist() == [5]
    rand = TransformedEnv(CountingEnv(max_steps=100), NoopResetEnv(noops=5))
    rand.set_seed(0)
    seen = {rand.reset()["observation"].item() for _ in range(20)}
    assert seen <= set(range(1, 6)) and len(seen) > 1
    short = TransformedEnv(CountingEnv(max_steps=2), NoopResetEnv(noops=3, random=False))
    assert short.reset()["observation"].tolist() == [1]  # an episode ended during the no-ops


def test_noop_reset_only_steps_the_reset_sub_envs():
    env = TransformedEnv(
        CountingEnv(max_steps=100, batch_size=(2,)), NoopResetEnv(noops=2, random=False)
    )
    td = env.reset()
    assert td["observation"].squeeze(-1).tolist() == [2, 2]
    td = env.step_mdp(env.step(ones(td)))
    td["_reset"] = torch.tensor([[False], [True]])
    assert env.reset(td)["observation"].squeeze(-1).tolist() == [3, 2]


def test_end_of_life_flags_lost_lives():
    env = TransformedEnv(Lives(max_steps=100), EndOfLifeTransform())
    data = env.rollout(7)
    assert data["next", "end-of-life"].squeeze(-1).tolist() == [0, 0, 1, 0, 0, 1, 0]
    assert "end-of-life" in env.full_done_spec.keys()
    assert not bool(data["next", "done"].any())
    env.base_env.lives = 3
    missing = TransformedEnv(CountingEnv(), EndOfLifeTransform(eol_attribute="nothing"))
    with pytest.raises(hub.errors.HubError, match="lives"):
        missing.reset()


def test_free_transforms_can_be_applied_to_data():
    data = TensorDict({"pixels": torch.zeros(2, 8, 8, 3, dtype=torch.uint8)}, [2])
    out = Compose(ToTensorImage(), Resize(4))(data)
    assert out["pixels"].shape == (2, 3, 4, 4)
