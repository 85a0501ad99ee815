"""Frames, tiles and video files: what hub shows a person of its envs.

One rule turns an env's image into a frame (:func:`to_frame`: ``H x W``, ``H x W x C``,
``C x H x W`` or a stack of those; uint8, bool or floats in ``[0, 1]``, to ``H x W x 3`` uint8,
see :mod:`hub.media.frames`); one writer makes a GIF or an MP4 of frames
(:func:`write_video`); :func:`tile` and :func:`compose` put several envs' frames in one
picture; :class:`FrameSource` takes a running env's frames from its ``render_frames()`` or its
image observation. ``VideoRecorder``, ``hub rollout --record`` and the exports' ``render()`` all
use these. Envs render through :meth:`hub.EnvBase.render_frames`.

Importing this package imports numpy only; Pillow (captions, GIFs) and imageio (MP4s) are
imported when used.

Example:
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from hub.media import tile, to_frame, write_video
    >>> chw = np.ones((3, 16, 16), dtype=np.float32)  # channels first, floats in [0, 1]
    >>> frame = to_frame(chw)
    >>> frame.shape, frame.dtype.name, int(frame.max())
    ((16, 16, 3), 'uint8', 255)
    >>> picture = tile([frame, frame])  # side by side
    >>> write_video(pathlib.Path(tempfile.mkdtemp()) / "clip.gif", [picture] * 3, fps=10).suffix
    '.gif'
"""

from hub.media.frames import (
    HOW_TO_GET_FRAMES,
    frames_of,
    image_observation_key,
    looks_like_image,
    no_frames_message,
    to_frame,
    to_numpy,
    to_uint8,
)
from hub.media.sources import FrameSource
from hub.media.tiles import compose, grid_shape, tile
from hub.media.video import check_video_path, write_video

__all__ = [
    "HOW_TO_GET_FRAMES",
    "FrameSource",
    "check_video_path",
    "compose",
    "frames_of",
    "grid_shape",
    "image_observation_key",
    "looks_like_image",
    "no_frames_message",
    "tile",
    "to_frame",
    "to_numpy",
    "to_uint8",
    "write_video",
]
