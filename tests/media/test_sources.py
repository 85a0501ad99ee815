"""``hub.media.FrameSource``: the frames of a running env, from ``render_frames()`` or an image
observation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from hub.errors import NoFramesError
from hub.media import FrameSource
from hub.specs import Composite, Unbounded


def uint8(*shape):
    return Unbounded(shape, dtype=torch.uint8)


def test_from_pixels_of_a_batched_env():
    env = SimpleNamespace(batch_size=torch.Size([2]))
    source = FrameSource.for_env(env, "fake:Env", Composite(pixels=uint8(2, 16, 16, 3), shape=(2,)))
    pixels = torch.zeros(2, 16, 16, 3, dtype=torch.uint8)
    pixels[1] = 7
    assert source.kind == "observation 'pixels'"
    assert (source.grab_envs({"pixels": pixels}, [1])[0] == 7).all()


def test_from_batched_render_frames():
    frames = np.zeros((3, 12, 12, 3), dtype=np.uint8)
    frames[0] = 9
    env = SimpleNamespace(batch_size=(3,), render_frames=lambda data: frames)
    source = FrameSource.for_env(env, "fake:Env", None)
    assert source.kind == "render_frames()"
    assert (source.grab(None) == 9).all()
    assert len(source.grab_envs(None, [0, 2])) == 2


def test_render_frames_is_given_the_data():
    seen = []

    def render_frames(data):
        seen.append(data)
        return np.zeros((8, 8, 3), np.uint8)

    source = FrameSource.for_env(
        SimpleNamespace(batch_size=(), render_frames=render_frames), "x", None
    )
    source.grab({"th": 1})
    assert seen == [{"th": 1}]


def test_an_env_that_does_not_render_falls_back_to_its_image_observation():
    def render_frames(data):
        raise NoFramesError("FakeEnv gives no frames: its class does not render.")

    env = SimpleNamespace(batch_size=(2,), render_frames=render_frames)
    spec = Composite(observation=uint8(2, 4, 84, 84), shape=(2,))
    source = FrameSource.for_env(env, "fake:Env", spec)
    observation = torch.zeros(2, 4, 84, 84, dtype=torch.uint8)
    observation[:, -1] = 5  # the newest of 4 stacked frames
    assert (source.grab({"observation": observation}) == 5).all()
    assert source.kind == "observation 'observation'"


def test_one_rendered_image_for_a_batch_with_image_observations_takes_the_observations():
    env = SimpleNamespace(batch_size=(2,), render_frames=lambda data: np.zeros((8, 8, 3), np.uint8))
    source = FrameSource.for_env(env, "fake:Env", Composite(pixels=uint8(2, 8, 8, 3), shape=(2,)))
    source.grab({"pixels": torch.zeros(2, 8, 8, 3, dtype=torch.uint8)})
    assert source.kind == "observation 'pixels'"


def test_an_env_without_frames_names_itself_and_how_to_get_frames():
    def render_frames(data):
        raise NoFramesError("CountingEnv gives no frames: its class does not render.")

    env = SimpleNamespace(batch_size=(), render_frames=render_frames)
    source = FrameSource.for_env(env, "hub:Counting", Composite(observation=Unbounded((1,))))
    with pytest.raises(NoFramesError) as info:
        source.grab({})
    assert str(info.value).startswith("hub:Counting: CountingEnv gives no frames")


def test_no_render_frames_and_no_image_is_an_error_before_the_run():
    env = SimpleNamespace(batch_size=())
    with pytest.raises(NoFramesError) as info:
        FrameSource.for_env(env, "fake:Env", Composite(observation=Unbounded((1,))))
    message = str(info.value)
    assert message.startswith("fake:Env gives no frames") and "from_pixels=True" in message


@pytest.mark.parametrize("nothing", [None, [None, None], np.asarray(None)])
def test_render_frames_that_give_nothing_fail_at_the_first_frame(nothing):
    calls = []
    env = SimpleNamespace(batch_size=(), render_frames=lambda data: calls.append(1) or nothing)
    source = FrameSource.for_env(env, "fake:Env", None)  # nothing is rendered before a reset
    assert calls == []
    with pytest.raises(NoFramesError, match="render_frames\\(\\) gave nothing"):
        source.grab(None)


def test_render_frames_that_fail_say_why():
    def render_frames(data):
        raise RuntimeError("no OpenGL")

    source = FrameSource.for_env(
        SimpleNamespace(batch_size=(), render_frames=render_frames), "x", None
    )
    with pytest.raises(NoFramesError, match=r"failed \(no OpenGL\)"):
        source.grab(None)
