"""GIF files written one frame at a time, so a long recording is never one big array.

A GIF gets one palette of up to 255 colours, taken from a few frames spread over the recording
(game screens have few colours; every frame maps to the nearest colour, without dithering, so
flat areas stay flat and compress well), and each frame stores only the rectangle that changed.
:func:`hub.media.write_video` is the writer to call: it checks the path and picks GIF or MP4.

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> out = Path(tempfile.mkdtemp()) / "clip.gif"
    >>> write_gif(out, [np.zeros((8, 8, 3), np.uint8)] * 3, fps=10)
    >>> out.stat().st_size > 0
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PALETTE_SAMPLES", "palette_of", "write_gif"]

#: how many frames, spread over a recording, its GIF palette is made from
PALETTE_SAMPLES = 6
# the palette index of "unchanged since the previous frame" (transparent): the palette has the
# other 255
_UNCHANGED = 255


def write_gif(path: Path, frames: Sequence[np.ndarray], fps: float) -> None:
    """Write ``frames`` (``H x W x 3`` uint8, all of one size) as a looping GIF at ``fps``.

    One palette for the whole file, from :data:`PALETTE_SAMPLES` frames spread over it; then
    each frame, taken one at a time (``frames`` may make them on access), as the rectangle that
    changed since the previous one, with the unchanged pixels in it transparent (a frame that
    changed nothing lengthens the previous one): a long recording costs one frame of memory
    and little disk.

    Raises:
        ValueError: ``frames`` is empty.
    """
    from PIL import GifImagePlugin, Image

    if not len(frames):
        raise ValueError("no frame to write")
    reference = palette_of(frames)
    delay = max(10, round(1000.0 / fps / 10) * 10)  # GIF delays are in hundredths of a second
    previous: np.ndarray | None = None
    pending: tuple[np.ndarray, tuple[int, int], int] | None = None
    with open(path, "wb") as out:
        canvas = Image.new("P", (frames[0].shape[1], frames[0].shape[0]))
        canvas.putpalette(reference.getpalette())
        header, _ = GifImagePlugin.getheader(canvas, info={"loop": 0, "optimize": False})
        out.writelines(header)
        for frame in frames:
            image = Image.fromarray(np.ascontiguousarray(frame))
            indexed = image.quantize(palette=reference, dither=Image.Dither.NONE)
            indices = np.asarray(indexed)
            box = _changed_box(previous, indices)
            if box is None and pending is not None:  # nothing changed: show the last one longer
                pending = (pending[0], pending[1], pending[2] + delay)
                continue
            if pending is not None:
                _write_gif_frame(out, *pending)
            top, bottom, left, right = box or (0, indices.shape[0], 0, indices.shape[1])
            patch = indices[top:bottom, left:right].copy()
            if previous is not None and previous.shape == indices.shape:
                # pixels that did not change are transparent: long runs that compress well
                patch[previous[top:bottom, left:right] == patch] = _UNCHANGED
            previous = indices
            pending = (patch, (left, top), delay)
        if pending is not None:
            _write_gif_frame(out, *pending)
        out.write(b";")


def palette_of(frames: Sequence[np.ndarray]) -> Any:
    """A Pillow image whose palette (up to 255 colours) fits :data:`PALETTE_SAMPLES` frames
    spread evenly over ``frames``."""
    from PIL import Image

    count = len(frames)
    picks = sorted(
        {round(i * (count - 1) / max(1, PALETTE_SAMPLES - 1)) for i in range(PALETTE_SAMPLES)}
    )
    samples = [np.ascontiguousarray(frames[i]) for i in picks]
    width = max(sample.shape[1] for sample in samples)
    strip = np.zeros((sum(sample.shape[0] for sample in samples), width, 3), np.uint8)
    top = 0
    for sample in samples:
        strip[top : top + sample.shape[0], : sample.shape[1]] = sample
        top += sample.shape[0]
    return Image.fromarray(strip).quantize(colors=_UNCHANGED, method=Image.Quantize.MEDIANCUT)


def _changed_box(previous: np.ndarray | None, current: np.ndarray) -> tuple[int, ...] | None:
    """``(top, bottom, left, right)`` of the pixels that differ; the whole frame when there is
    no previous one of the same size; ``None`` when none differ."""
    if previous is None or previous.shape != current.shape:
        return (0, current.shape[0], 0, current.shape[1])
    changed = previous != current
    rows = np.flatnonzero(changed.any(axis=1))
    if rows.size == 0:
        return None
    columns = np.flatnonzero(changed[rows[0] : rows[-1] + 1].any(axis=0))
    return (int(rows[0]), int(rows[-1]) + 1, int(columns[0]), int(columns[-1]) + 1)


def _write_gif_frame(out: Any, patch: np.ndarray, offset: tuple[int, int], duration: int) -> None:
    """One frame: the palette indices of ``patch`` at ``offset``, :data:`_UNCHANGED` see-through."""
    from PIL import GifImagePlugin, Image

    image = Image.frombytes("P", (patch.shape[1], patch.shape[0]), patch.tobytes())
    chunks = GifImagePlugin.getdata(
        image, offset=offset, duration=duration, transparency=_UNCHANGED
    )
    out.writelines(chunks)
