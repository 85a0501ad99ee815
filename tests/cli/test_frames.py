"""Frames for ``--record``: image layouts, frame sources, writers."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from hub.cli.errors import CliError
from hub.cli.frames import (
    FrameSource,
    check_writer,
    first_env,
    image_observation_key,
    to_rgb_frame,
    to_uint8,
    write_video,
)


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((32, 24), (32, 24, 3)),  # grayscale
        ((32, 24, 1), (32, 24, 3)),  # HWC grayscale
        ((32, 24, 3), (32, 24, 3)),  # HWC
        ((32, 24, 4), (32, 24, 3)),  # HWC with alpha
        ((3, 32, 24), (32, 24, 3)),  # CHW
        ((1, 32, 24), (32, 24, 3)),  # CHW grayscale
        ((4, 84, 84), (84, 84, 3)),  # stack of 4 grayscale frames (EnvPool Atari)
        ((2, 32, 24, 3), (32, 24, 3)),  # stack of HWC frames
        ((2, 3, 32, 24), (32, 24, 3)),  # stack of CHW frames
    ],
)
def test_to_rgb_frame_layouts(shape, expected):
    frame = to_rgb_frame(np.zeros(shape, dtype=np.uint8))
    assert frame.shape == expected and frame.dtype == np.uint8


def test_stack_keeps_the_newest_frame():
    # 4 frames: a first dim of 1 or 3 would be read as channels (CHW), as documented
    stack = np.stack([np.full((16, 16), v, dtype=np.uint8) for v in (10, 20, 30, 40)])
    assert (to_rgb_frame(stack) == 40).all()


def test_chw_is_moved_to_hwc():
    chw = np.zeros((3, 8, 10), dtype=np.uint8)
    chw[0] = 255  # red channel
    frame = to_rgb_frame(torch.from_numpy(chw))
    assert frame.shape == (8, 10, 3)
    assert (frame[..., 0] == 255).all() and (frame[..., 1:] == 0).all()


def test_to_uint8_scales_unit_floats_and_clips_others():
    assert to_uint8(np.array([0.0, 1.0])).tolist() == [0, 255]
    assert to_uint8(np.array([-5.0, 100.0, 300.0])).tolist() == [0, 100, 255]
    assert to_uint8(np.array([True, False])).tolist() == [255, 0]


def test_bad_image_rank_is_a_clear_error():
    with pytest.raises(CliError, match="cannot record frames of shape"):
        to_rgb_frame(np.zeros(5, dtype=np.uint8))


def test_first_env_indexes_every_batch_dim():
    value = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    assert first_env(value, (2, 3)).tolist() == [0, 1, 2, 3]
    assert first_env(value, ()).shape == (2, 3, 4)


class FakeComposite:
    """Just enough of a Composite spec for the frame-source lookup."""

    def __init__(self, **specs):
        self._specs = specs

    def keys(self, include_nested=False, leaves_only=False):
        return list(self._specs)

    def __getitem__(self, key):
        return self._specs[key]


def leaf(shape, dtype=torch.uint8):
    return SimpleNamespace(shape=torch.Size(shape), dtype=dtype)


def test_image_observation_key_prefers_pixels():
    spec = FakeComposite(observation=leaf((4, 84, 84)), pixels=leaf((64, 64, 3)))
    assert image_observation_key(spec, 0) == "pixels"


def test_image_observation_key_finds_uint8_images_only():
    batch = FakeComposite(ram=leaf((8, 128)), observation=leaf((8, 4, 84, 84)))
    assert image_observation_key(batch, 1) == "observation"
    assert image_observation_key(FakeComposite(obs=leaf((3,), torch.float32)), 0) is None
    assert image_observation_key(FakeComposite(obs=leaf((84, 84), torch.float32)), 0) is None
    assert image_observation_key(FakeComposite(tiny=leaf((2, 2))), 0) is None


def test_frame_source_from_pixels_of_a_batched_env():
    env = SimpleNamespace(batch_size=torch.Size([2]))
    spec = FakeComposite(pixels=leaf((2, 16, 16, 3)))
    source = FrameSource.for_env(env, "fake:Env", spec)
    pixels = torch.zeros(2, 16, 16, 3, dtype=torch.uint8)
    pixels[0] = 7
    frame = source.grab({"pixels": pixels})
    assert frame.shape == (16, 16, 3) and (frame == 7).all()


def test_frame_source_from_batched_render():
    frames = np.zeros((3, 12, 12, 3), dtype=np.uint8)
    frames[0] = 9
    env = SimpleNamespace(batch_size=(3,), render=lambda: frames)
    source = FrameSource.for_env(env, "fake:Env", None)
    assert source.kind == "render()"
    assert (source.grab(None) == 9).all()


def test_no_frames_error_says_what_to_pass():
    env = SimpleNamespace(batch_size=())  # no render()
    with pytest.raises(CliError) as info:
        FrameSource.for_env(env, "hub:Counting", FakeComposite(observation=leaf((1,))))
    message = str(info.value.message)
    assert "hub:Counting gives no frames" in message and "no render()" in message
    assert "from_pixels=True" in message


def test_render_that_returns_nothing_fails_at_the_first_frame():
    calls = []
    env = SimpleNamespace(batch_size=(), render=lambda: calls.append(1))
    source = FrameSource.for_env(env, "fake:Env", None)  # render() is not called before reset
    assert calls == []
    with pytest.raises(CliError, match="render\\(\\) returns nothing"):
        source.grab(None)


def test_check_writer_rejects_other_suffixes(tmp_path):
    with pytest.raises(CliError, match=r"\.gif or \.mp4"):
        check_writer(tmp_path / "out.png")


def test_check_writer_needs_an_existing_folder(tmp_path):
    with pytest.raises(CliError, match="does not exist"):
        check_writer(tmp_path / "missing" / "out.gif")


def test_check_writer_names_the_install_line_when_imageio_is_missing(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "imageio" else real(name, *a)
    )
    with pytest.raises(CliError, match=r'pip install "hub\[all\]"'):
        check_writer(tmp_path / "out.gif")


def test_check_writer_names_the_mp4_encoder_when_missing(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    missing = {"imageio_ffmpeg", "av"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a)
    )
    with pytest.raises(CliError, match=r"imageio\[ffmpeg\]"):
        check_writer(tmp_path / "out.mp4")


def test_write_gif(tmp_path):
    pytest.importorskip("imageio")
    import imageio.v3 as iio

    frames = [np.full((10, 12, 3), v, dtype=np.uint8) for v in (0, 100, 200)]
    out = tmp_path / "clip.gif"
    write_video(out, frames, fps=10)
    assert iio.improps(out).shape == (3, 10, 12, 3)


def test_write_nothing_is_an_error(tmp_path):
    with pytest.raises(CliError, match="no frame was recorded"):
        write_video(tmp_path / "clip.gif", [], fps=10)
