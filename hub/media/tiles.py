"""Frames of several envs in one picture: :func:`tile` (a plain grid, as ``VideoRecorder``
writes) and :func:`compose` (scaled up and captioned, as ``hub rollout --record`` writes).

Both lay frames out with :func:`grid_shape` and place frames of different sizes in cells of the
largest one, top-left aligned. :func:`compose` scales each frame by a whole factor with
nearest-neighbour (pixels stay sharp) so that its shorter side is at least
:data:`MIN_TILE_SIDE` pixels, lays the tiles out in rows of up to :data:`MAX_COLUMNS`, puts a bar
above each tile naming the env and its running return, and a bar on top with the step. Text is
drawn with Pillow's default font.

Example:
    >>> import numpy as np
    >>> frames = [np.zeros((84, 84, 3), np.uint8)] * 8
    >>> picture = compose(frames, env_ids=range(8), returns=[0.0] * 8, step=10)
    >>> picture.shape  # 4 x 2 tiles of 336 x 336 pixels, a caption bar on each, a title bar
    (744, 1344, 3)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "BAR_HEIGHT",
    "MAX_COLUMNS",
    "MIN_TILE_SIDE",
    "compose",
    "grid_shape",
    "scale_factor",
    "scale_nearest",
    "tile",
]

#: the least height and width of a tile: frames are scaled up by a whole factor to reach it
MIN_TILE_SIDE = 256
#: the most tiles in one row
MAX_COLUMNS = 4
#: the height of a caption bar, in pixels
BAR_HEIGHT = 24
#: the size of the caption text, in pixels (where Pillow can draw scalable text)
FONT_SIZE = 16
BACKGROUND = np.array([24, 24, 24], np.uint8)
TEXT = (255, 255, 255)


def scale_factor(height: int, width: int, min_side: int = MIN_TILE_SIDE) -> int:
    """The least whole factor that makes the shorter side at least ``min_side`` pixels.

    Example:
        >>> scale_factor(84, 84), scale_factor(210, 160), scale_factor(400, 600)
        (4, 2, 1)
    """
    return max(1, math.ceil(min_side / max(1, min(height, width))))


def scale_nearest(frame: np.ndarray, factor: int) -> np.ndarray:
    """``frame`` (``H x W x C``) scaled up ``factor`` times with nearest-neighbour.

    Example:
        >>> scale_nearest(np.arange(4, dtype=np.uint8).reshape(2, 2, 1), 2)[..., 0].tolist()
        [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]
    """
    if factor == 1:
        return frame
    return np.repeat(np.repeat(frame, factor, axis=0), factor, axis=1)


def grid_shape(count: int, max_columns: int | None = MAX_COLUMNS) -> tuple[int, int]:
    """Rows and columns for ``count`` tiles: as few rows as ``max_columns`` allows, and the
    columns spread evenly over them; ``max_columns=None`` makes a near-square grid.

    Example:
        >>> grid_shape(8), grid_shape(6), grid_shape(3), grid_shape(1)
        ((2, 4), (2, 3), (1, 3), (1, 1))
        >>> grid_shape(8, max_columns=None), grid_shape(2, max_columns=None)
        ((3, 3), (1, 2))
    """
    if max_columns is None:
        max_columns = math.ceil(math.sqrt(count))
    rows = max(1, math.ceil(count / max(1, max_columns)))
    return rows, max(1, math.ceil(count / rows))


def tile(
    frames: Sequence[np.ndarray],
    max_columns: int | None = None,
    background: Sequence[int] = (0, 0, 0),
) -> np.ndarray:
    """``frames`` (``H x W x 3`` uint8) side by side in a grid of :func:`grid_shape` (near-square
    by default), each in a cell of the largest frame's size on ``background``.

    Example:
        >>> frames = [np.full((8, 8, 3), 255, np.uint8)] * 3
        >>> picture = tile(frames)
        >>> picture.shape, int(picture[8:, 8:].max())  # 2 x 2 cells, the last one empty
        ((16, 16, 3), 0)
    """
    if not len(frames):
        raise ValueError("tile needs at least one frame")
    if len(frames) == 1:
        return frames[0]
    height = max(frame.shape[0] for frame in frames)
    width = max(frame.shape[1] for frame in frames)
    rows, columns = grid_shape(len(frames), max_columns)
    picture = np.empty((rows * height, columns * width, 3), np.uint8)
    picture[:] = np.asarray(background, np.uint8)
    for index, frame in enumerate(frames):
        row, column = divmod(index, columns)
        top, left = row * height, column * width
        picture[top : top + frame.shape[0], left : left + frame.shape[1]] = frame
    return picture


def format_return(value: float) -> str:
    """A running return as short text: whole numbers without decimals.

    Example:
        >>> format_return(-3.0), format_return(12.3456), format_return(1234.5)
        ('-3', '12.35', '1234.5')
    """
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}" if abs(value) < 1000 else f"{value:.1f}"


@functools.lru_cache(maxsize=1)
def _font() -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=FONT_SIZE)
    except (ImportError, OSError, TypeError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def draw_text(bar: np.ndarray, text: str) -> np.ndarray:
    """``bar`` (an ``H x W x 3`` strip) with ``text`` written on it, left-aligned.

    Example:
        >>> bar = np.zeros((BAR_HEIGHT, 120, 3), np.uint8)
        >>> bool(draw_text(bar, "step 1").any())
        True
    """
    from PIL import Image, ImageDraw

    image = Image.fromarray(bar)
    draw = ImageDraw.Draw(image)
    font = _font()
    top, bottom = draw.textbbox((0, 0), "Ag", font=font)[1::2]
    draw.text((6, (bar.shape[0] - (bottom + top)) // 2), text, fill=TEXT, font=font)
    return np.asarray(image)


@functools.lru_cache(maxsize=256)
def caption_bar(width: int, text: str) -> np.ndarray:
    """A bar :data:`BAR_HEIGHT` pixels high and ``width`` wide with ``text`` on it (cached: the
    captions of a recording repeat from frame to frame)."""
    bar = np.empty((BAR_HEIGHT, width, 3), np.uint8)
    bar[:] = BACKGROUND
    bar = draw_text(bar, text)
    bar.flags.writeable = False
    return bar


@functools.lru_cache(maxsize=4)
def _blank(shape: tuple[int, ...]) -> np.ndarray:
    canvas = np.empty(shape, np.uint8)
    canvas[:] = BACKGROUND
    canvas.flags.writeable = False
    return canvas


def compose(
    frames: Sequence[np.ndarray],
    *,
    env_ids: Iterable[int],
    returns: Sequence[float],
    step: int,
    title: str = "",
) -> np.ndarray:
    """One picture of a step: the frames (``H x W x 3`` uint8, one per env) tiled, scaled and
    captioned with each env's id and running return; ``title`` and the step on top.

    Frames of different sizes are placed in cells of the largest one (top-left aligned).

    Example:
        >>> frames = [np.zeros((64, 64, 3), np.uint8)] * 2
        >>> compose(frames, env_ids=[0, 5], returns=[1.0, -2.5], step=3).shape
        (304, 512, 3)
    """
    if not frames:
        raise ValueError("compose needs at least one frame")
    height = max(frame.shape[0] for frame in frames)
    width = max(frame.shape[1] for frame in frames)
    factor = scale_factor(height, width)
    cell_h, cell_w = height * factor + BAR_HEIGHT, width * factor
    rows, columns = grid_shape(len(frames))
    picture = _blank((BAR_HEIGHT + rows * cell_h, columns * cell_w, 3)).copy()
    picture[:BAR_HEIGHT] = caption_bar(picture.shape[1], f"{title}  step {step}".strip())
    for index, (frame, env_id, value) in enumerate(zip(frames, env_ids, returns, strict=False)):
        row, column = divmod(index, columns)
        top, left = BAR_HEIGHT + row * cell_h, column * cell_w
        picture[top : top + BAR_HEIGHT, left : left + cell_w] = caption_bar(
            cell_w, f"env {env_id}  return {format_return(value)}"
        )
        tile = scale_nearest(frame, factor)
        tile_h, tile_w = tile.shape[:2]
        picture[top + BAR_HEIGHT : top + BAR_HEIGHT + tile_h, left : left + tile_w] = tile
    return picture
