"""``EnvBase.render_frames``: declared once, with a clear default, and the one way every
recorder, transform, export and ``hub rollout --record`` takes an env's frames."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.errors import NoFramesError
from hub.media import FrameSource, to_frame
from hub.specs import Categorical, Composite, Unbounded
from hub.transforms import PixelRenderTransform, TransformedEnv, VideoRecorder


class Shows(hub.EnvBase):
    """An env whose ``"pixels"`` observation is always ``image`` (for the channel rules)."""

    def __init__(self, image: torch.Tensor) -> None:
        super().__init__()
        self.image = image
        self.observation_spec = Composite(pixels=Unbounded(image.shape, dtype=image.dtype))
        self.action_spec = Categorical(2, shape=(1,))
        self.reward_spec = Unbounded((1,))

    def _reset_arrays(self, rows=None, inputs=None, **kwargs):
        return {"pixels": self.image}

    def _step_arrays(self, inputs, rows=None):
        return {"pixels": self.image, "reward": 0.0, "terminated": False}

    def _set_seed(self, seed):
        pass


IMAGES = {
    "bool mask": torch.tensor([[True, False] * 4] * 8),
    "floats in [0, 1] with a NaN": torch.full((8, 8), 0.5).index_put_(
        (torch.tensor([0]), torch.tensor([0])), torch.tensor(float("nan"))
    ),
    "bfloat16 CHW": torch.full((3, 8, 8), 0.25, dtype=torch.bfloat16),
    "RGBA": torch.full((8, 8, 4), 40, dtype=torch.uint8),
    "4 stacked frames": torch.arange(4, dtype=torch.uint8).repeat_interleave(64).reshape(4, 8, 8),
}


@pytest.mark.parametrize("name", list(IMAGES))
def test_the_recorder_and_the_command_line_apply_one_channel_rule(name):
    """``VideoRecorder`` and ``hub rollout --record``'s frame source make the same frame of an
    image, the one ``hub.media.to_frame`` makes (they had two rules: a bool mask was 0/1 for
    the recorder and 0/255 for the command line)."""
    image = IMAGES[name]
    env = TransformedEnv(Shows(image), VideoRecorder(make_grid=False))
    data = env.reset()
    recorded = env.transform.frames[-1]
    source = FrameSource.for_env(env, "test:Shows", env.full_observation_spec)
    watched = source.grab(data)
    assert source.kind == "observation 'pixels'"  # Shows does not render
    expected = to_frame(image)
    assert recorded.dtype == watched.dtype == np.uint8
    assert (recorded == expected).all() and (watched == expected).all()
    if name == "bool mask":
        assert sorted(np.unique(recorded).tolist()) == [0, 255]


def test_the_default_says_how_to_get_frames():
    with pytest.raises(NoFramesError) as info:
        CountingEnv().render_frames()
    message = str(info.value)
    assert message.startswith("CountingEnv gives no frames: its class does not render.")
    assert "render_mode='rgb_array'" in message and "from_pixels=True" in message
    assert isinstance(info.value, NotImplementedError)
    assert isinstance(info.value, hub.errors.HubError)


def test_pendulum_draws_every_row_of_its_data():
    env = PendulumEnv(pixels_size=16, batch_size=[3])
    data = env.reset()
    frames = env.render_frames(data)
    assert frames.shape == (3, 16, 16, 3) and frames.dtype == np.uint8
    assert not np.array_equal(frames[0], frames[1])
    with pytest.raises(NoFramesError, match="stateless"):
        env.render_frames()


def test_a_transformed_env_gives_its_base_envs_frames():
    env = TransformedEnv(PendulumEnv(pixels_size=16), PixelRenderTransform())
    data = env.reset()
    assert env.render_frames(data).shape == (16, 16, 3)
    with pytest.raises(NoFramesError, match="CountingEnv"):
        TransformedEnv(CountingEnv()).render_frames()


def test_a_batched_env_stacks_its_sub_envs_frames():
    class Drawn(CountingEnv):
        def render_frames(self, tensordict=None):
            return np.full((6, 6, 3), int(self.count.item()) * 10, dtype=np.uint8)

    env = hub.SerialEnv(2, Drawn)
    try:
        env.reset()
        frames = env.render_frames()
        assert isinstance(frames, np.ndarray) and frames.shape == (2, 6, 6, 3)
    finally:
        env.close()
    env = hub.SerialEnv(2, CountingEnv)
    try:
        env.reset()
        with pytest.raises(NoFramesError, match="the sub-envs of SerialEnv cannot render"):
            env.render_frames()
    finally:
        env.close()


def test_pixel_render_transform_draws_a_stateless_env_by_default():
    """``PixelRenderTransform()`` calls ``render_frames(data)``: hub's Pendulum, which draws the
    data it is given, needs no ``pass_tensordict=True``."""
    env = TransformedEnv(PendulumEnv(pixels_size=12), PixelRenderTransform())
    data = env.rollout(3)
    assert data["next", "pixels"].shape == (3, 12, 12, 3)
    assert data["next", "pixels"].dtype == torch.uint8


def test_pixel_render_transform_can_call_another_method():
    class Drawn(CountingEnv):
        def render(self):
            return torch.full((6, 6, 3), int(self.count.item()) * 10, dtype=torch.uint8)

    env = TransformedEnv(Drawn(), PixelRenderTransform(render_method="render"))
    assert env.rollout(2)["next", "pixels"][:, 0, 0, 0].tolist() == [10, 20]
