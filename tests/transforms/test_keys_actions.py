"""Key, action, auto-reset, control and recorder transforms."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
import torch
from tensordict import TensorDict

import hub
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.errors import HubError, SpecMismatchError
from hub.specs import Categorical, Composite, MultiCategorical, OneHot, Unbounded
from hub.transforms import (
    ActionDiscretizer,
    ActionMask,
    AutoResetTransform,
    Compose,
    ConditionalSkip,
    DiscreteActionProjection,
    ExcludeTransform,
    FiniteTensorDictCheck,
    MaskedCategorical,
    MultiAction,
    PixelRenderTransform,
    RemoveEmptySpecs,
    RenameTransform,
    RewardSum,
    SelectTransform,
    StepCounter,
    TensorDictPrimer,
    TransformedEnv,
    VideoRecorder,
)

from .transform_envs import MaskedChoice, OneHotCounting, SelfResettingCounting


def ones(td):
    return td.set("action", torch.ones_like(td["observation"]))


def int_ones(td):
    return td.set("action", torch.ones(td.batch_size + (1,), dtype=torch.int64))


# ---------------------------------------------------------------- keys


def test_rename_transform_follows_the_seed_figure():
    env = TransformedEnv(
        CountingEnv(),
        RenameTransform(["observation"], ["count"], in_keys_inv=["action"], out_keys_inv=["move"]),
    )
    assert env.observation_keys == ["count"] and env.action_keys == ["move"]
    td = env.reset()
    td["move"] = torch.ones(1, dtype=torch.int64)
    out = env.step(td)
    assert "action" not in out.keys()  # the policy's data keeps the policy's names
    assert out["next", "count"].tolist() == [1] and out["next", "reward"].tolist() == [1.0]
    copy = TransformedEnv(CountingEnv(), RenameTransform(["reward"], ["r"], create_copy=True))
    assert set(copy.reward_keys) == {"reward", "r"}
    with pytest.raises(ValueError, match="done flag"):
        RenameTransform(["done"], ["finished"])


def test_exclude_and_select():
    env = TransformedEnv(PendulumEnv(from_pixels=True, pixels_size=8), ExcludeTransform("pixels"))
    assert "pixels" not in env.observation_keys
    assert "pixels" not in env.rollout(2)["next"].keys()
    sel = TransformedEnv(
        PendulumEnv(from_pixels=True, pixels_size=8), SelectTransform("observation")
    )
    assert set(sel.observation_keys) == {"observation", "th", "thdot", "step_count"}
    assert set(sel.rollout(2)["next"].keys()) == {
        "observation",
        "th",
        "thdot",
        "step_count",
        "reward",
        "done",
        "terminated",
        "truncated",
    }
    with pytest.raises(ValueError, match="done flag"):
        ExcludeTransform("done")
    inverse = TransformedEnv(CountingEnv(), ExcludeTransform("junk", inverse=True))
    td = inverse.reset().set("junk", torch.zeros(1))
    assert inverse.step(ones(td))["next", "observation"].tolist() == [1]


def test_remove_empty_specs_drops_empty_entries_from_data_too():
    class WithInfo(CountingEnv):
        def __init__(self):
            super().__init__()
            self.observation_spec = self.observation_spec.clone().set("info", Composite())

        def _step(self, td):
            return super()._step(td).set("info", TensorDict({}, []))

    env = TransformedEnv(WithInfo(), RemoveEmptySpecs())
    assert "info" not in env.observation_spec.keys()
    assert "info" not in env.rollout(2)["next"].keys()


def test_primer_sets_at_reset_and_carries_the_policys_value():
    env = TransformedEnv(
        hub.SerialEnv(2, CountingEnv), TensorDictPrimer(hidden=Unbounded((3,)), default_value=1.0)
    )
    assert env.state_spec["hidden"].shape == (2, 3)
    td = env.reset()
    assert td["hidden"].tolist() == [[1.0] * 3] * 2
    td["hidden"] = torch.full((2, 3), 7.0)
    out = env.step(ones(td))
    assert out["next", "hidden"].tolist() == [[7.0] * 3] * 2
    td = env.step_mdp(out)
    td["_reset"] = torch.tensor([[True], [False]])
    assert env.reset(td)["hidden"][:, 0].tolist() == [1.0, 7.0]
    rand = TransformedEnv(CountingEnv(), TensorDictPrimer(h=Unbounded((50,)), random=True))
    assert rand.reset()["h"].std() > 0.5


# ---------------------------------------------------------------- actions


def test_action_mask_keeps_random_actions_allowed():
    env = TransformedEnv(MaskedChoice(), ActionMask())
    assert isinstance(env.action_spec, MaskedCategorical)
    assert env.rollout(6)["action"].tolist() == [0, 1, 2, 0, 1, 2]
    one_hot = TransformedEnv(MaskedChoice(one_hot=True), ActionMask())
    assert one_hot.rollout(3)["action"].long().argmax(-1).tolist() == [0, 1, 2]
    batched = TransformedEnv(MaskedChoice(batch_size=(3,)), ActionMask())
    assert batched.rollout(2)["action"].tolist() == [[0, 1]] * 3
    with pytest.raises(HubError, match="Categorical or OneHot"):
        TransformedEnv(PendulumEnv(), ActionMask())


def test_action_mask_with_checks_rejects_a_masked_action():
    env = TransformedEnv(MaskedChoice(), ActionMask(), checks=True)
    td = env.reset().set("action", torch.tensor(2))
    with pytest.raises(SpecMismatchError, match="mask"):
        env.step(td)
    later = TransformedEnv(MaskedChoice(), ActionMask())
    later.checks = True  # turned on after construction
    with pytest.raises(SpecMismatchError, match="mask"):
        later.step(later.reset().set("action", torch.tensor(1)))


def test_action_discretizer_exposes_only_the_discrete_action():
    seen = []

    class Spy(PendulumEnv):
        def _step(self, td):
            seen.append(td["action"].clone())
            return super()._step(td)

    env = TransformedEnv(Spy(), ActionDiscretizer(5, out_action_key="action_discrete"))
    assert env.action_keys == ["action_discrete"]
    assert env.action_spec == Categorical(5, shape=(1,))
    td = env.reset().set("action_discrete", torch.tensor([0]))
    env.step(td)
    assert seen[-1].tolist() == pytest.approx([-1.6])  # the centre of [-2, -1.2]
    env.step(env.step_mdp(td).set("action_discrete", torch.tensor([4])))
    assert seen[-1].tolist() == pytest.approx([1.6])
    hub.check_env_specs(env)


def test_action_discretizer_several_dims_and_one_hot():
    class TwoDims(PendulumEnv):
        def __init__(self):
            super().__init__()
            from hub.specs import Bounded

            self.action_spec = Bounded(-1.0, 1.0, shape=(2,))

        def _step(self, td):
            return super()._step(td.copy().set("action", td["action"][..., :1]))

    multi = TransformedEnv(TwoDims(), ActionDiscretizer([3, 4]))
    assert isinstance(multi.action_spec, MultiCategorical)
    hub.check_env_specs(multi)
    one_hot = TransformedEnv(PendulumEnv(), ActionDiscretizer(4, categorical=False))
    assert isinstance(one_hot.action_spec, OneHot) and one_hot.action_spec.shape == (4,)
    hub.check_env_specs(one_hot)


def test_discrete_action_projection():
    env = TransformedEnv(OneHotCounting(n=3), DiscreteActionProjection(3, 5))
    assert env.action_spec == OneHot(5, shape=(5,))
    td = env.reset().set("action", torch.nn.functional.one_hot(torch.tensor(2), 5).bool())
    assert env.step(td)["next", "reward"].tolist() == [2.0]
    td = env.reset().set("action", torch.nn.functional.one_hot(torch.tensor(4), 5).bool())
    assert env.step(td)["next", "reward"].item() in (0.0, 1.0, 2.0)
    with pytest.raises(ValueError):
        DiscreteActionProjection(6, 5)


def test_multi_action_runs_the_sequence_and_stops_at_done():
    env = TransformedEnv(CountingEnv(max_steps=4), Compose(MultiAction(3), StepCounter()))
    stepped = env.step(env.reset().set("action", torch.tensor([[1], [0], [1]])))
    out = stepped["next"]
    assert out["observation"].tolist() == [3] and out["reward"].tolist() == [2.0]
    assert out["step_count"].tolist() == [1]
    td = env.step_mdp(stepped).set("action", torch.ones(3, 1, dtype=torch.int64))
    out = env.step(td)["next"]
    assert out["observation"].tolist() == [4] and bool(out["done"])  # stopped after one action
    assert out["reward"].tolist() == [1.0]


# ---------------------------------------------------------------- auto-reset


def test_the_seed_auto_resetting_env_example_with_native_auto_reset():
    torch.manual_seed(0)
    env = SelfResettingCounting(max_steps=3, auto_reset=True, auto_reset_replace=True)
    env.set_seed(0)
    r = env.rollout(8, break_when_any_done=False)
    assert r["next", "done"].squeeze().tolist() == [0, 0, 1, 0, 0, 1, 0, 0]
    assert r["next", "observation"].squeeze(-1).tolist() == [1, 2, -1, 1, 2, -1, 1, 2]


def test_auto_reset_transform_on_a_self_resetting_env():
    class Floats(SelfResettingCounting):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.observation_spec = Composite(observation=Unbounded((1,)))

        def _reset(self, td, **kw):
            return (
                super()._reset(td, **kw).apply(lambda t: t.float() if t.dtype == torch.int64 else t)
            )

        def _step(self, td):
            return super()._step(td).apply(lambda t: t.float() if t.dtype == torch.int64 else t)

    env = TransformedEnv(Floats(max_steps=2), Compose(AutoResetTransform(), RewardSum()))
    data = env.rollout(6, policy=int_ones, break_when_any_done=False)
    obs = data["next", "observation"].squeeze(-1).tolist()
    assert obs[0] == 1.0 and math.isnan(obs[1]) and obs[2] == 1.0 and math.isnan(obs[3])
    assert data["observation"].squeeze(-1).tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert data["next", "episode_reward"].squeeze(-1).tolist() == [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    hub.check_env_specs(env)
    keep = TransformedEnv(SelfResettingCounting(max_steps=2), AutoResetTransform(replace=False))
    obs = keep.rollout(4, break_when_any_done=False)["next", "observation"].squeeze(-1)
    assert obs.tolist() == [1, 0, 1, 0]


def test_auto_reset_transform_must_be_first():
    env = TransformedEnv(
        SelfResettingCounting(max_steps=2), Compose(StepCounter(), AutoResetTransform())
    )
    with pytest.raises(HubError, match="first"):
        env.rollout(4, break_when_any_done=False)


# ---------------------------------------------------------------- control


def test_conditional_skip_keeps_skipped_sub_envs_as_they_were():
    env = TransformedEnv(
        hub.SerialEnv(2, CountingEnv, {"max_steps": 50}),
        Compose(ConditionalSkip(lambda td: td["observation"] >= 2), StepCounter()),
    )
    data = env.rollout(4, policy=ones)
    assert data["next", "observation"].squeeze(-1).tolist() == [[1, 2, 2, 2], [1, 2, 2, 2]]
    skip_first = TransformedEnv(
        hub.SerialEnv(2, CountingEnv, {"max_steps": 50}),
        ConditionalSkip(lambda td: torch.tensor([True, False])),
    )
    out = skip_first.rollout(3, policy=ones)
    assert out["next", "observation"].squeeze(-1).tolist() == [[0, 0, 0], [1, 2, 3]]
    assert out["next", "reward"].squeeze(-1).tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]


def test_finite_check_raises_on_nan():
    class NaNReward(CountingEnv):
        def _step(self, td):
            return super()._step(td).set("reward", torch.tensor([float("nan")]))

    env = TransformedEnv(NaNReward(), FiniteTensorDictCheck())
    env.reset()
    with pytest.raises(SpecMismatchError, match="reward"):
        env.rollout(2)


# ---------------------------------------------------------------- recorders


def test_video_recorder_writes_a_gif(tmp_path):
    env = TransformedEnv(
        hub.SerialEnv(2, PendulumEnv, {"from_pixels": True, "pixels_size": 16}),
        VideoRecorder(tmp_path / "out.gif", fps=10),
    )
    env.rollout(4)
    assert len(env.transform.frames) == 5  # the reset and 4 steps
    assert env.transform.frames[0].shape == (16, 32, 3)  # two sub-envs side by side
    path = env.transform.dump()
    assert path.exists() and path.stat().st_size > 0
    assert env.transform.frames == []
    import imageio.v2 as imageio

    frames = imageio.mimread(path)  # GIF writers merge identical consecutive frames
    assert 1 <= len(frames) <= 5 and frames[0].shape[:2] == (16, 32)
    with pytest.raises(HubError, match="no frame"):
        env.transform.dump()


def test_video_recorder_first_env_only_and_channels_first(tmp_path):
    from hub.transforms import ToTensorImage

    env = TransformedEnv(
        hub.SerialEnv(2, PendulumEnv, {"from_pixels": True, "pixels_size": 8}),
        Compose(ToTensorImage(), VideoRecorder(make_grid=False, max_frames=2)),
    )
    env.rollout(5)
    assert len(env.transform[-1].frames) == 2
    assert env.transform[-1].frames[0].shape == (8, 8, 3)
    with pytest.raises(HubError, match="gif or .mp4"):
        env.transform[-1].dump(tmp_path / "x.png")


@pytest.mark.skipif(
    not any(importlib.util.find_spec(m) for m in ("imageio_ffmpeg", "av")),
    reason="writing MP4 needs imageio-ffmpeg or PyAV, not installed here",
)
def test_video_recorder_writes_an_mp4(tmp_path):
    env = TransformedEnv(PendulumEnv(from_pixels=True, pixels_size=16), VideoRecorder())
    env.rollout(4)
    assert env.transform.dump(tmp_path / "out.mp4").stat().st_size > 0


def test_pixel_render_transform_and_recorder_on_a_batched_env(tmp_path):
    class Drawn(CountingEnv):
        def render_frames(self, tensordict=None):
            return np.full((6, 6, 3), int(self.count.item()) * 10, dtype=np.uint8)

    env = hub.SerialEnv(2, Drawn, {"max_steps": 20})
    env = env.append_transform(PixelRenderTransform())
    env = env.append_transform(VideoRecorder())
    assert env.observation_spec["pixels"].shape == (2, 6, 6, 3)
    data = env.rollout(3)
    assert data["next", "pixels"][:, :, 0, 0, 0].tolist() == [[10, 20, 30], [10, 20, 30]]
    hub.check_env_specs(env)
    assert env.transform[-1].dump(tmp_path / "r.gif").exists()
    with pytest.raises(HubError, match="render"):
        TransformedEnv(CountingEnv(), PixelRenderTransform())
