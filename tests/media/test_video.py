"""``hub.media.write_video`` (the one writer of GIF and MP4 files) and ``check_video_path``."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from hub.errors import HubError, MissingDependencyError
from hub.media import check_video_path, write_video
from hub.media.gif import write_gif
from hub.media.video import write_mp4

iio = pytest.importorskip("imageio.v3", reason="videos need imageio (the 'all' extra)")


def moving_dot(count: int) -> list[np.ndarray]:
    frames = []
    for i in range(count):
        frame = np.zeros((32, 48, 3), np.uint8)
        frame[:] = (144, 72, 17)
        frame[4 + i : 8 + i, 2 * i : 2 * i + 3] = (236, 236, 236)
        frames.append(frame)
    return frames


def test_gif_frames_read_back_exactly(tmp_path):
    frames = moving_dot(6)
    frames.insert(3, frames[2].copy())  # an unchanged frame lengthens the one before
    out = write_video(tmp_path / "dot.gif", frames, fps=10)
    back = iio.imread(out, index=None)[..., :3]
    expected = [f for i, f in enumerate(frames) if i != 3]
    assert back.shape == (6, 32, 48, 3)
    assert all((b == e).all() for b, e in zip(back, expected, strict=True))


def test_mp4_is_readable(tmp_path):
    pytest.importorskip("imageio_ffmpeg", reason="MP4 needs imageio-ffmpeg (the 'all' extra)")
    out = write_video(tmp_path / "dot.mp4", moving_dot(5), fps=10)
    back = iio.imread(out, index=None)
    assert back.shape[0] == 5 and back.shape[1:] == (32, 48, 3)


def test_writing_nothing_is_an_error(tmp_path):
    with pytest.raises(HubError, match="no frame was recorded"):
        write_video(tmp_path / "clip.gif", [], fps=10)
    assert not (tmp_path / "clip.gif").exists()
    with pytest.raises(ValueError, match="no frame"):
        write_gif(tmp_path / "x.gif", [], fps=10)
    with pytest.raises(ValueError, match="no frame"):
        write_mp4(tmp_path / "x.mp4", [], fps=10)


def test_other_suffixes_are_refused(tmp_path):
    with pytest.raises(HubError, match=r"\.gif or \.mp4"):
        check_video_path(tmp_path / "out.png")
    with pytest.raises(HubError, match=r"\.gif or \.mp4"):
        write_video(tmp_path / "out.png", moving_dot(1))


def test_the_folder_must_exist(tmp_path):
    with pytest.raises(HubError, match="does not exist"):
        check_video_path(tmp_path / "missing" / "out.gif")
    assert check_video_path(str(tmp_path / "out.GIF")) == tmp_path / "out.GIF"


def test_a_missing_imageio_names_the_install_line(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "imageio" else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r'pip install "hub\[all\]"'):
        check_video_path(tmp_path / "out.gif")


def test_a_missing_mp4_encoder_names_the_install_line(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    missing = {"imageio_ffmpeg", "av"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"imageio\[ffmpeg\]"):
        check_video_path(tmp_path / "out.mp4")
    check_video_path(tmp_path / "out.gif")  # a GIF needs no encoder
