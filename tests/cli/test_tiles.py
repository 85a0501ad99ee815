"""The picture of a recorded step (``hub.cli.tiles``) and the GIF/MP4 writers behind it."""

from __future__ import annotations

import numpy as np
import pytest

from hub.cli.errors import CliError
from hub.cli.recording import MAX_RECORD_ENVS, parse_record_envs
from hub.cli.tiles import BAR_HEIGHT, MIN_TILE_SIDE, compose, grid_shape, scale_nearest
from hub.transforms.video_files import write_gif, write_mp4

iio = pytest.importorskip("imageio.v3", reason="--record needs imageio (the 'all' extra)")


def coloured(count: int, height: int = 84, width: int = 84) -> list[np.ndarray]:
    """``count`` frames, frame ``i`` filled with the grey level ``10 * (i + 1)``."""
    return [np.full((height, width, 3), 10 * (i + 1), np.uint8) for i in range(count)]


def cell(picture: np.ndarray, index: int, columns: int, tile: tuple[int, int]) -> np.ndarray:
    """The image part (below its caption bar) of tile ``index`` of a composed picture."""
    row, column = divmod(index, columns)
    top = BAR_HEIGHT + row * (tile[0] + BAR_HEIGHT) + BAR_HEIGHT
    return picture[top : top + tile[0], column * tile[1] : (column + 1) * tile[1]]


@pytest.mark.parametrize("count", [1, 3, 5, 8])
def test_compose_tiles_every_env_scaled_to_at_least_256_px(count):
    picture = compose(coloured(count), env_ids=range(count), returns=[0.0] * count, step=7)
    rows, columns = grid_shape(count)
    side = 84 * 4  # the least whole factor that reaches 256
    assert side >= MIN_TILE_SIDE
    assert picture.shape == (BAR_HEIGHT + rows * (side + BAR_HEIGHT), columns * side, 3)
    for index in range(count):
        assert (cell(picture, index, columns, (side, side)) == 10 * (index + 1)).all()


def test_scaling_is_nearest_neighbour():
    frame = np.random.default_rng(0).integers(0, 256, (30, 20, 3), dtype=np.uint8)
    scaled = scale_nearest(frame, 13)
    assert scaled.shape == (390, 260, 3)
    assert (scaled[::13, ::13] == frame).all() and (scaled[12::13, 12::13] == frame).all()


def test_a_large_frame_is_not_scaled():
    frames = coloured(1, 400, 600)
    assert compose(frames, env_ids=[0], returns=[0.0], step=0).shape == (448, 600, 3)


def test_the_running_return_and_the_step_are_drawn():
    frames = coloured(2)
    base = compose(frames, env_ids=[0, 1], returns=[0.0, 0.0], step=1)
    other_return = compose(frames, env_ids=[0, 1], returns=[0.0, 21.0], step=1)
    other_step = compose(frames, env_ids=[0, 1], returns=[0.0, 0.0], step=2)
    changed = np.argwhere((base != other_return).any(-1))
    assert changed.size  # the text changed pixels, in env 1's caption bar only
    assert changed[:, 0].min() >= BAR_HEIGHT and changed[:, 0].max() < 2 * BAR_HEIGHT
    assert changed[:, 1].min() >= 336
    changed = np.argwhere((base != other_step).any(-1))
    assert changed.size and changed[:, 0].max() < BAR_HEIGHT  # the title bar only


def test_parse_record_envs():
    assert parse_record_envs(None, 3) == [0, 1, 2]
    assert parse_record_envs(None, 64) == list(range(MAX_RECORD_ENVS))
    assert parse_record_envs("4", 64) == [0, 1, 2, 3]
    assert parse_record_envs("7, 2,7", 8) == [7, 2]
    for text, num_envs, message in [
        ("0", 16, "a count from 1 to 8"),
        ("9", 16, "a count from 1 to 8"),
        ("3", 2, "a count from 1 to 2"),
        ("1,9", 8, "no env 9 in a batch of 8"),
        ("a,b", 8, "expected a count"),
        (",".join(map(str, range(9))), 16, "at most 8"),
    ]:
        with pytest.raises(CliError, match=message):
            parse_record_envs(text, num_envs)


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
    out = tmp_path / "dot.gif"
    write_gif(out, frames, fps=10)
    back = iio.imread(out, index=None)[..., :3]
    expected = [f for i, f in enumerate(frames) if i != 3]
    assert back.shape == (6, 32, 48, 3)
    assert all((b == e).all() for b, e in zip(back, expected, strict=True))


def test_mp4_is_readable(tmp_path):
    pytest.importorskip("imageio_ffmpeg", reason="MP4 needs imageio-ffmpeg (the 'all' extra)")
    out = tmp_path / "dot.mp4"
    write_mp4(out, iter(moving_dot(5)), fps=10)
    back = iio.imread(out, index=None)
    assert back.shape[0] == 5 and back.shape[1:] == (32, 48, 3)


def test_writers_need_a_frame(tmp_path):
    with pytest.raises(ValueError, match="no frame"):
        write_gif(tmp_path / "x.gif", [], fps=10)


def test_recording_keeps_the_running_returns_of_the_chosen_envs():
    from types import SimpleNamespace

    import torch

    from hub.cli.episodes import EpisodeTracker
    from hub.cli.frames import FrameSource
    from hub.cli.recording import TiledRecording

    frames = np.zeros((3, 8, 8, 3), np.uint8)
    env = SimpleNamespace(batch_size=(3,), render=lambda: frames)
    recording = TiledRecording(FrameSource.for_env(env, "fake:Env", None), [2, 0], every=2)
    tracker = EpisodeTracker(3)
    recording.add(0, None, tracker.running_returns)
    for step in range(1, 5):
        tracker.update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([False, False, step == 4]))
        recording.add(step, None, tracker.running_returns)
    assert len(recording) == 3  # steps 0, 2, 4
    assert recording._returns == [[0.0, 0.0], [6.0, 2.0], [12.0, 4.0]]  # env 2 ends at step 4
    assert recording[2].shape == (BAR_HEIGHT + BAR_HEIGHT + 256, 2 * 256, 3)
