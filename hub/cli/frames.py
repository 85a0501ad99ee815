"""Frames of the first env for ``hub rollout --record``, and writing them as a GIF or an MP4.

A frame comes from the env's ``"pixels"`` observation when it has one, else from
``env.render()``. Pixels may be HWC or CHW, grayscale, float or uint8, or a stack of frames
(the last frame of the stack is the newest and is the one kept).

Example:
    >>> import numpy as np
    >>> to_rgb_frame(np.zeros((4, 84, 84), dtype=np.uint8)).shape  # 4 stacked grayscale frames
    (84, 84, 3)
    >>> to_rgb_frame(np.zeros((3, 64, 48), dtype=np.float32)).shape  # CHW, floats in [0, 1]
    (64, 48, 3)
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hub.cli.errors import CliError

SUFFIXES = (".gif", ".mp4")
IMAGEIO_INSTALL = 'pip install "hub[all]"  (or: pip install imageio)'
MP4_INSTALL = 'pip install "imageio[ffmpeg]"  (or: pip install "imageio[pyav]")'
_CHANNELS = (1, 3, 4)
# the smallest height and width of an observation taken for an image
MIN_SIDE = 8


def check_writer(path: Path) -> None:
    """Fail early, before any env is built, when ``path`` cannot be written.

    Raises:
        CliError: the suffix is not .gif or .mp4, imageio is missing, MP4 has no encoder, or the
            folder does not exist.

    Example:
        >>> check_writer(Path("out.png"))
        Traceback (most recent call last):
        ...
        hub.cli.errors.CliError: cannot record to 'out.png': the file name must end in .gif or .mp4.
    """
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise CliError(f"cannot record to {str(path)!r}: the file name must end in .gif or .mp4.")
    if importlib.util.find_spec("imageio") is None:
        raise CliError(
            f"--record needs the imageio library, which is not installed. Install it with: "
            f"{IMAGEIO_INSTALL}"
        )
    if suffix == ".mp4" and not any(
        importlib.util.find_spec(name) is not None for name in ("imageio_ffmpeg", "av")
    ):
        raise CliError(
            f"writing an MP4 needs an encoder for imageio (imageio-ffmpeg or PyAV), and none is "
            f"installed. Install one with: {MP4_INSTALL}; or record a GIF (--record out.gif)."
        )
    if not path.parent.exists():
        raise CliError(
            f"cannot record to {str(path)!r}: the folder {str(path.parent)!r} does not exist."
        )


def to_numpy(value: Any) -> np.ndarray:
    """A tensor, array or nested list as a numpy array (on the CPU).

    Example:
        >>> to_numpy([[0, 1]]).shape
        (1, 2)
    """
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """Pixels as uint8: floats in ``[0, 1]`` are scaled by 255, other values are clipped.

    Example:
        >>> to_uint8(np.array([0.0, 0.5, 1.0])).tolist()
        [0, 127, 255]
    """
    if image.dtype == np.uint8:
        return image
    if image.dtype == np.bool_:
        return image.astype(np.uint8) * 255
    values = image.astype(np.float64)
    if np.issubdtype(image.dtype, np.floating) and values.size and float(np.nanmax(values)) <= 1.0:
        values = values * 255.0
    return np.clip(np.nan_to_num(values), 0, 255).astype(np.uint8)


def to_rgb_frame(image: Any) -> np.ndarray:
    """One ``H x W x 3`` uint8 frame from an image or a stack of images of one env.

    Accepted: ``HW``; ``HWC`` or ``CHW`` with 1, 3 or 4 channels (alpha is dropped); a stack
    ``NHW`` (grayscale frames, e.g. EnvPool's Atari ``4 x 84 x 84``), ``NHWC`` or ``NCHW``.
    A 3-dim image whose last dim is 1, 3 or 4 is read as HWC; else one whose first dim is 1 or 3
    as CHW; else as a stack of grayscale frames.

    Raises:
        CliError: the image has fewer than 2 or more than 4 dims.

    Example:
        >>> to_rgb_frame(np.zeros((2, 8, 8, 3), dtype=np.uint8)).shape
        (8, 8, 3)
    """
    frame = to_numpy(image)
    if frame.ndim == 4:  # a stack of colour frames: keep the newest
        frame = frame[-1]
    if frame.ndim == 3:
        if frame.shape[-1] in _CHANNELS:
            pass
        elif frame.shape[0] in (1, 3):
            frame = np.moveaxis(frame, 0, -1)
        else:  # a stack of grayscale frames
            frame = frame[-1]
    if frame.ndim == 2:
        frame = frame[..., None]
    if frame.ndim != 3:
        raise CliError(
            f"cannot record frames of shape {tuple(to_numpy(image).shape)}: expected an image "
            "(H x W, H x W x C or C x H x W) or a stack of images."
        )
    frame = to_uint8(frame)
    if frame.shape[-1] == 1:
        frame = np.repeat(frame, 3, axis=-1)
    return np.ascontiguousarray(frame[..., :3])


def first_env(value: Any, batch_size: Sequence[int]) -> Any:
    """The part of a batched value that belongs to the first env.

    Example:
        >>> first_env(np.zeros((2, 3, 8, 8)), (2, 3)).shape
        (8, 8)
    """
    for _ in batch_size:
        value = value[0]
    return value


class FrameSource:
    """Takes one frame of the first env per step, from an image observation or ``env.render()``.

    The first :meth:`grab` must come after the env's first reset (gym envs refuse to render
    before it); a ``render()`` that gives no image then raises the "no frames" error.

    Example:
        >>> from types import SimpleNamespace
        >>> env = SimpleNamespace(batch_size=(), render=lambda: np.zeros((6, 6, 3), np.uint8))
        >>> source = FrameSource.for_env(env, "fake:Env", observation_spec=None)
        >>> source.kind, source.grab({}).shape
        ('render()', (6, 6, 3))
    """

    def __init__(
        self,
        kind: str,
        grab_fn: Callable[[Any], Any],
        batch_size: Sequence[int],
        *,
        uri: str = "the env",
        fallback: tuple[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        self.kind = kind
        self._grab = grab_fn
        self._batch_size = tuple(batch_size)
        self._uri = uri
        self._checked = kind != "render()"
        self._fallback = fallback

    def grab(self, data: Any) -> np.ndarray:
        """The frame of the first env, given the data the env just returned."""
        return self.grab_envs(data, [0])[0]

    def grab_envs(self, data: Any, env_ids: Sequence[int]) -> list[np.ndarray]:
        """The frames of the envs ``env_ids`` (indices into the flattened batch); a source that
        gives one image for the whole batch (a ``render()`` of one env) gives one frame."""
        image = self._image(data)
        if not self._batch_size:
            return [to_rgb_frame(image)]
        array = to_numpy(image)
        flat = array.reshape(-1, *array.shape[len(self._batch_size) :])
        return [to_rgb_frame(flat[i]) for i in env_ids]

    def _image(self, data: Any) -> Any:
        if self._checked:
            return _as_array(self._grab(data))
        try:
            image = _as_array(self._grab(data))
        except Exception as err:  # noqa: BLE001 - a render() that fails: use the observation
            if self._fallback is None:
                raise no_frames_error(self._uri, f"its render() failed ({err})") from err
            image = None
        return self._check_render(image, data)

    def _check_render(self, image: Any, data: Any) -> Any:
        """On the first rendered image: is there one, and does it carry the batch dims? An
        image observation is taken instead when render() gives nothing, or one image for a
        batch of envs."""
        batched = image is not None and _is_batched(image, self._batch_size)
        if self._fallback is not None and (image is None or (self._batch_size and not batched)):
            self.kind, self._grab = self._fallback
            self._checked = True
            return self._grab(data)
        if image is None:
            raise no_frames_error(self._uri, "its render() returns nothing")
        if not batched:
            self._batch_size = ()
        self._checked = True
        return image

    @classmethod
    def for_env(cls, env: Any, uri: str, observation_spec: Any) -> FrameSource:
        """The frame source of ``env``, or a :class:`CliError` saying how to get frames.

        ``env.render()`` when it gives an RGB image per env (or the one env's image); else the
        ``"pixels"`` observation; else the first uint8 observation shaped like an image or a
        stack of images (EnvPool's Atari ``"observation"``). The choice is made at the first
        :meth:`grab`.
        """
        batch_size = tuple(env.batch_size)
        key = image_observation_key(observation_spec, len(batch_size))
        observed = None
        if key is not None:
            observed = (f"observation {key!r}", lambda data: data.get(key))
        render = getattr(env, "render", None)
        if not callable(render):
            if observed is None:
                raise no_frames_error(uri, "no render()")
            return cls(observed[0], observed[1], batch_size, uri=uri)

        def rendered(data: Any) -> Any:
            try:
                return render()
            except NotImplementedError:
                return None

        return cls("render()", rendered, batch_size, uri=uri, fallback=observed)


def no_frames_error(uri: str, reason: str) -> CliError:
    """The error for an env that gives nothing to record, with what to pass instead.

    Example:
        >>> no_frames_error("hub:Counting", "no render()").message[:40]
        'hub:Counting gives no frames to record: '
    """
    return CliError(
        f'{uri} gives no frames to record: it has no "pixels" or other image observation, and '
        f"{reason}. Ask the env for pixels, e.g. --kwarg from_pixels=True (gym, dm_control) or "
        "--kwarg render_mode=rgb_array (gymnasium), or record another env."
    )


def image_observation_key(observation_spec: Any, batch_ndim: int) -> Any:
    """The observation key to record: ``"pixels"``, else the first uint8 image-like leaf.

    Image-like: after the batch dims, 2 to 4 dims of which the last two or the two before a
    channel dim are at least :data:`MIN_SIDE` (so a vector of RAM bytes is not an image).

    Example:
        >>> image_observation_key(None, 0) is None
        True
    """
    if observation_spec is None:
        return None
    keys = list(observation_spec.keys(include_nested=True, leaves_only=True))
    if "pixels" in keys or ("pixels",) in keys:
        return "pixels"
    for key in sorted(keys, key=lambda k: (k,) if isinstance(k, str) else tuple(k)):
        spec = observation_spec[key]
        if getattr(spec, "dtype", None) is None or str(spec.dtype) != "torch.uint8":
            continue
        shape = tuple(spec.shape)[batch_ndim:]
        if _looks_like_image(shape):
            return key
    return None


def _looks_like_image(shape: tuple[int, ...]) -> bool:
    if not 2 <= len(shape) <= 4:
        return False
    sides = shape[-2:] if shape[-1] > 4 else shape[-3:-1]
    return len(sides) == 2 and min(sides) >= MIN_SIDE


def _as_array(image: Any) -> Any:
    """A rendered tuple or list of frames (one per env: gymnasium's vector envs) as one array."""
    if isinstance(image, (tuple, list)) and image and all(x is not None for x in image):
        return np.stack([to_numpy(x) for x in image])
    return image


def _is_batched(frame: Any, batch_size: Sequence[int]) -> bool:
    """Whether a rendered frame carries the batch dims first (one image per env)."""
    if not batch_size:
        return False
    shape = tuple(to_numpy(frame).shape)
    return len(shape) >= len(batch_size) + 2 and shape[: len(batch_size)] == tuple(batch_size)


def write_video(path: Path, frames: Sequence[np.ndarray], fps: float) -> None:
    """Write frames as a looping GIF or an MP4, chosen by the file suffix, one frame at a time
    (a lazy sequence, as :mod:`hub.cli.recording` gives, is never held whole in memory):
    :func:`hub.transforms.recorders.write_video`, with the CLI's error for no frame.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "clip.gif"
        >>> write_video(out, [np.zeros((8, 8, 3), np.uint8)] * 2, fps=10)
        >>> out.exists()
        True
    """
    from hub.transforms.recorders import write_video as write_frames

    if not frames:
        raise CliError(f"no frame was recorded, so {str(path)!r} was not written.")
    write_frames(path, frames, fps)
