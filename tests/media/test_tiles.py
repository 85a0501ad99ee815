"""``hub.media.tile`` and ``hub.media.compose``: several envs' frames in one picture."""

from __future__ import annotations

import numpy as np
import pytest

from hub.media import compose, grid_shape, tile
from hub.media.tiles import BAR_HEIGHT, MIN_TILE_SIDE, scale_nearest

pytest.importorskip("PIL", reason="captions need Pillow (the 'all' extra)")


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


@pytest.mark.parametrize(
    ("count", "shape"),
    [(1, (1, 1)), (2, (1, 2)), (3, (2, 2)), (4, (2, 2)), (5, (2, 3)), (9, (3, 3))],
)
def test_tile_is_a_near_square_grid(count, shape):
    assert grid_shape(count, max_columns=None) == shape
    picture = tile(coloured(count, 8, 6))
    assert picture.shape == (shape[0] * 8, shape[1] * 6, 3)
    for index in range(count):
        row, column = divmod(index, shape[1])
        assert (
            picture[row * 8 : (row + 1) * 8, column * 6 : (column + 1) * 6] == 10 * (index + 1)
        ).all()


def test_tile_puts_frames_of_other_sizes_in_cells_of_the_largest():
    picture = tile([np.full((4, 4, 3), 9, np.uint8), np.full((8, 6, 3), 7, np.uint8)])
    assert picture.shape == (8, 12, 3)
    assert (picture[:4, :4] == 9).all() and (picture[4:, :6] == 0).all()
    assert (picture[:, 6:] == 7).all()


def test_tile_needs_a_frame():
    with pytest.raises(ValueError, match="at least one frame"):
        tile([])
