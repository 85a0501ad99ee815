"""Video files: :func:`write_video` writes frames as a looping GIF or an MP4 (by the file's
suffix), one frame at a time; :func:`check_video_path` says before a run whether a path can be
written. ``VideoRecorder.dump`` and ``hub rollout --record`` both write through these.

A GIF needs Pillow (installed with imageio, in the ``all`` extra); an MP4 needs imageio and an
encoder for it (imageio-ffmpeg or PyAV), and its frames are cropped to an even height and width,
as most encoders need.

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> out = Path(tempfile.mkdtemp()) / "clip.gif"
    >>> write_video(out, [np.zeros((8, 8, 3), np.uint8)] * 2, fps=10).suffix
    '.gif'
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from hub.errors import HubError, MissingDependencyError
from hub.media.gif import write_gif

__all__ = [
    "IMAGEIO_INSTALL",
    "MP4_INSTALL",
    "SUFFIXES",
    "check_video_path",
    "write_mp4",
    "write_video",
]

#: the file suffixes :func:`write_video` writes
SUFFIXES = (".gif", ".mp4")
IMAGEIO_INSTALL = 'pip install "hub[all]"  (or: pip install imageio)'
MP4_INSTALL = 'pip install "imageio[ffmpeg]"  (or: pip install "imageio[pyav]")'
_MP4_ENCODERS = ("imageio_ffmpeg", "av")


def check_video_path(path: str | Path) -> Path:
    """``path`` as a :class:`~pathlib.Path`, once it is known to be writable as a video: its
    suffix is ``.gif`` or ``.mp4``, imageio (and for an MP4 an encoder) is installed, and its
    folder exists.

    Raises:
        HubError: the suffix is not .gif or .mp4, or the folder does not exist.
        MissingDependencyError: imageio, or an MP4 encoder, is missing (the message has the
            install line).

    Example:
        >>> check_video_path("out.png")
        Traceback (most recent call last):
        ...
        hub.errors.HubError: cannot write a video to 'out.png': the file name must end in .gif or .mp4.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise HubError(
            f"cannot write a video to {str(path)!r}: the file name must end in .gif or .mp4."
        )
    if importlib.util.find_spec("imageio") is None:
        raise MissingDependencyError(
            "imageio",
            message=f"writing a video needs the imageio library, which is not installed. "
            f"Install it with: {IMAGEIO_INSTALL}",
        )
    if suffix == ".mp4" and not any(importlib.util.find_spec(m) for m in _MP4_ENCODERS):
        raise MissingDependencyError(
            "imageio-ffmpeg",
            message=f"writing an MP4 needs an encoder for imageio (imageio-ffmpeg or PyAV), and "
            f"none is installed. Install one with: {MP4_INSTALL}; or write a .gif.",
        )
    if not path.parent.exists():
        raise HubError(
            f"cannot write a video to {str(path)!r}: the folder {str(path.parent)!r} does not "
            "exist."
        )
    return path


def write_video(path: str | Path, frames: Sequence[np.ndarray], fps: float = 30) -> Path:
    """Write ``frames`` (``H x W x 3`` uint8, all of one size; see :func:`hub.media.to_frame`)
    as a looping ``.gif`` or an ``.mp4`` at ``fps`` frames per second, and return the path.

    Frames are taken one at a time: a sequence that makes each frame on access (as
    ``hub rollout --record`` gives) is never held whole in memory. A GIF has one palette and
    stores the rectangle that changed in each frame (:mod:`hub.media.gif`).

    Raises:
        HubError: the path cannot be written (:func:`check_video_path`), or there is no frame.
        MissingDependencyError: imageio or the MP4 encoder is missing or fails to start.

    Example:
        >>> import tempfile
        >>> write_video(Path(tempfile.mkdtemp()) / "none.gif", [])
        Traceback (most recent call last):
        ...
        hub.errors.HubError: no frame was recorded, so ... was not written: roll out first.
    """
    path = check_video_path(path)
    if not len(frames):
        raise HubError(f"no frame was recorded, so {str(path)!r} was not written: roll out first.")
    if path.suffix.lower() == ".gif":
        write_gif(path, frames, fps)
        return path
    try:
        write_mp4(path, iter(frames), fps)
    except (ValueError, RuntimeError, ImportError) as err:
        raise MissingDependencyError(
            "imageio-ffmpeg",
            message=f"writing an MP4 needs a working imageio encoder (imageio-ffmpeg or PyAV): "
            f"{err}. Install one with: {MP4_INSTALL}; or write a .gif.",
        ) from None
    return path


def _even(frame: np.ndarray) -> np.ndarray:
    """``frame`` cropped to an even height and width (at least 2 x 2)."""
    height, width = frame.shape[0] - frame.shape[0] % 2, frame.shape[1] - frame.shape[1] % 2
    return frame[: max(height, 2), : max(width, 2)]


def write_mp4(path: Path, frames: Iterable[np.ndarray], fps: float) -> None:
    """Write ``frames`` (``H x W x 3`` uint8) as an H.264 MP4 at ``fps`` frames per second,
    with imageio's FFmpeg writer (``imageio-ffmpeg``) or else its PyAV one.

    Raises:
        ValueError: ``frames`` is empty.
    """
    iterator = iter(frames)
    first = next(iterator, None)
    if first is None:
        raise ValueError("no frame to write")
    if importlib.util.find_spec("imageio_ffmpeg") is not None:
        import imageio.v2 as iio2

        writer = iio2.get_writer(path, format="FFMPEG", mode="I", fps=fps, macro_block_size=2)
        try:
            writer.append_data(_even(first))
            for frame in iterator:
                writer.append_data(_even(frame))
        finally:
            writer.close()
        return
    import imageio.v3 as iio

    with iio.imopen(path, "w", plugin="pyav") as out:
        out.init_video_stream("libx264", fps=fps)
        out.write_frame(_even(first))
        for frame in iterator:
            out.write_frame(_even(frame))
