"""Recorders: ``VideoRecorder`` (images of a rollout to a GIF or MP4 file) and
``PixelRenderTransform`` (an env's ``render()`` as a ``"pixels"`` observation).

Example:
    >>> import tempfile, pathlib
    >>> import hub
    >>> from hub.transforms import TransformedEnv, VideoRecorder
    >>> env = TransformedEnv(hub.make_env("hub:Pendulum", from_pixels=True, pixels_size=32),
    ...                      VideoRecorder(in_keys=["pixels"]))
    >>> _ = env.rollout(5)
    >>> path = env.transform.dump(pathlib.Path(tempfile.mkdtemp()) / "pendulum.gif")
    >>> path.suffix, path.stat().st_size > 0
    ('.gif', True)
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.errors import HubError, MissingDependencyError
from hub.specs import Bounded, Composite
from hub.transforms._utils import NestedKey, norm_key
from hub.transforms.transform import Transform
from hub.transforms.video_files import write_gif, write_mp4

__all__ = ["VideoRecorder", "PixelRenderTransform", "to_frame"]

_CHANNELS = (1, 3, 4)


def to_frame(image: torch.Tensor) -> np.ndarray:
    """One ``H x W x 3`` uint8 frame from one env's image: ``HW``, ``HWC`` or ``CHW`` (1, 3 or
    4 channels), floats in ``[0, 1]`` or uint8, or a stack of frames (the newest, last, is kept).

    Example:
        >>> to_frame(torch.zeros(4, 84, 84, dtype=torch.uint8)).shape
        (84, 84, 3)
    """
    frame = image.detach().cpu()
    if frame.ndim == 4:
        frame = frame[-1]
    if frame.ndim == 3:
        if frame.shape[-1] in _CHANNELS:
            pass
        elif frame.shape[0] in (1, 3):
            frame = frame.permute(1, 2, 0)
        else:
            frame = frame[-1]
    if frame.ndim == 2:
        frame = frame.unsqueeze(-1)
    if frame.ndim != 3:
        raise HubError(f"cannot make a video frame of an image of shape {list(image.shape)}.")
    if frame.dtype != torch.uint8:
        frame = frame.double()
        if image.is_floating_point() and frame.numel() and float(frame.max()) <= 1.0:
            frame = frame * 255
        frame = frame.nan_to_num().clamp(0, 255).to(torch.uint8)
    if frame.shape[-1] == 1:
        frame = frame.expand(*frame.shape[:-1], 3)
    return np.ascontiguousarray(frame[..., :3].numpy())


def _grid(frames: list[np.ndarray]) -> np.ndarray:
    """Tile frames of one size into a near-square grid."""
    if len(frames) == 1:
        return frames[0]
    cols = math.ceil(math.sqrt(len(frames)))
    rows = math.ceil(len(frames) / cols)
    h, w, c = frames[0].shape
    out = np.zeros((rows * h, cols * w, c), dtype=np.uint8)
    for i, frame in enumerate(frames):
        r, col = divmod(i, cols)
        out[r * h : (r + 1) * h, col * w : (col + 1) * w] = frame
    return out


def write_video(path: Path, frames: Sequence[np.ndarray], fps: float) -> Path:
    """Write ``frames`` (height, width, 3; uint8) as a looping ``.gif`` or an ``.mp4``, one
    frame at a time (:mod:`hub.transforms.video_files`: one palette and changed rectangles for
    a GIF; MP4 frames cropped to even sizes, which most encoders need).

    ``VideoRecorder.dump`` and ``hub rollout --record`` both write through this function.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "clip.gif"
        >>> write_video(out, [np.zeros((8, 8, 3), np.uint8)] * 2, fps=10).exists()
        True
    """
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise HubError(f"cannot write {str(path)!r}: the file name must end in .gif or .mp4.")
    if importlib.util.find_spec("imageio") is None:
        raise MissingDependencyError(
            "imageio",
            message="writing a video needs imageio, which is not installed: "
            'pip install "hub[all]" (or: pip install imageio).',
        )
    if not len(frames):
        raise HubError(f"no frame was recorded, so {str(path)!r} was not written: roll out first.")
    if suffix == ".gif":
        write_gif(path, frames, fps)
        return path
    try:
        write_mp4(path, iter(frames), fps)
    except (ValueError, RuntimeError, ImportError) as err:
        raise MissingDependencyError(
            "imageio-ffmpeg",
            message=f"writing an MP4 needs an imageio encoder (imageio-ffmpeg or PyAV): "
            f'{err}. Install one with: pip install "imageio[ffmpeg]", or write a .gif.',
        ) from None
    return path


class VideoRecorder(Transform):
    """Keep the images of every step (and reset) and write them as a video with :meth:`dump`.

    Channels-last or channels-first images, uint8 or floats in ``[0, 1]``, and stacks of frames
    are all accepted. With a batched env, the frames of all sub-envs are tiled into one
    (``make_grid=True``) or only the first sub-env's are kept. The cache grows until ``dump``
    (or ``max_frames``, which keeps the newest).

    Args:
        path: the default file of :meth:`dump` (``.gif`` or ``.mp4``).
        in_keys: the image entry (default ``["pixels"]``).
        skip: keep one step in ``skip``.
        fps: frames per second of the video.
        make_grid: tile the sub-envs' images (else keep the first sub-env's).
        max_frames: keep at most this many frames (the newest).

    Example:
        >>> import hub
        >>> from hub.transforms import TransformedEnv, VideoRecorder
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum", from_pixels=True, pixels_size=16),
        ...                      VideoRecorder(skip=2))
        >>> _ = env.rollout(6)
        >>> len(env.transform.frames), env.transform.frames[0].shape
        (4, (16, 16, 3))
    """

    def __init__(
        self,
        path: str | Path | None = None,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        skip: int = 1,
        fps: float = 30,
        make_grid: bool = True,
        max_frames: int | None = None,
    ) -> None:
        super().__init__(in_keys if in_keys is not None else ["pixels"])
        if len(self._in_keys) != 1:
            raise ValueError("VideoRecorder records one image entry: give one in_key.")
        if skip < 1:
            raise ValueError(f"skip must be at least 1, got {skip}.")
        self.path = Path(path) if path is not None else None
        self.skip = int(skip)
        self.fps = fps
        self.make_grid = make_grid
        self.max_frames = max_frames
        self.frames: list[np.ndarray] = []
        self._count = 0
        self._event_ndim: int | None = None

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        key = self._in_keys[0]
        spec = observation_spec.get(key)
        if spec is None:
            raise KeyError(
                f"VideoRecorder records {key!r}, which is not an observation of this env "
                f"(observations: {observation_spec.keys(True, True)}); add "
                "PixelRenderTransform() before it, or pass in_keys=."
            )
        self._event_ndim = spec.ndim - len(observation_spec.shape)
        return observation_spec

    def _record(self, tensordict: TensorDictBase) -> TensorDictBase:
        value = tensordict.get(self._in_keys[0], None)
        if value is None:
            return tensordict
        self._count += 1
        if (self._count - 1) % self.skip:
            return tensordict
        event = self._event_ndim if self._event_ndim is not None else min(value.ndim, 3)
        images = value.reshape(-1, *value.shape[value.ndim - event :])
        if self.make_grid:
            frame = _grid([to_frame(img) for img in images])
        else:
            frame = to_frame(images[0])
        self.frames.append(frame)
        if self.max_frames is not None and len(self.frames) > self.max_frames:
            del self.frames[: len(self.frames) - self.max_frames]
        return tensordict

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        return self._record(tensordict)

    def dump(self, path: str | Path | None = None) -> Path:
        """Write the cached frames to ``path`` (``.gif`` or ``.mp4``), clear them, and return
        the path."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise HubError("VideoRecorder.dump needs a path (or pass path= to the recorder).")
        write_video(target, self.frames, self.fps)
        self.frames = []
        self._count = 0
        return target

    def _extra_repr(self) -> str:
        return f"in_keys={self._in_keys}, skip={self.skip}, frames={len(self.frames)}"


class PixelRenderTransform(Transform):
    """Write the env's ``render()`` image in ``"pixels"`` after each step and reset.

    The spec comes from one rendered image, taken when the transform is added (this resets
    the env once). With a batched env, ``render`` is called on each sub-env and the images are
    stacked.

    Args:
        out_keys: where the image goes (default ``["pixels"]``).
        preproc: a function applied to each rendered image (a tensor) before it is written.
        render_method: the name of the env's method to call.
        pass_tensordict: call ``render(data)`` (stateless envs need their data to draw).
        **render_kwargs: passed to the render method.

    Example:
        >>> import hub
        >>> from hub.transforms import PixelRenderTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum", pixels_size=24),
        ...                      PixelRenderTransform(pass_tensordict=True))
        >>> env.rollout(2)["next", "pixels"].shape
        torch.Size([2, 24, 24, 3])
    """

    def __init__(
        self,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        preproc: Callable[[torch.Tensor], torch.Tensor] | None = None,
        render_method: str = "render",
        pass_tensordict: bool = False,
        **render_kwargs: Any,
    ) -> None:
        super().__init__()
        keys = ["pixels"] if out_keys is None else out_keys
        self.out_key = norm_key(keys if isinstance(keys, str | tuple) else list(keys)[0])
        self.preproc = preproc
        self.render_method = render_method
        self.pass_tensordict = pass_tensordict
        self.render_kwargs = render_kwargs
        self._sample: torch.Tensor | None = None
        self._event_shape = torch.Size()

    @property
    def out_keys(self) -> list[NestedKey]:
        return [self.out_key]

    def _render(self, env: Any, data: TensorDictBase | None) -> torch.Tensor:
        method = getattr(env, self.render_method, None)
        if not callable(method):
            raise HubError(
                f"PixelRenderTransform calls {type(env).__name__}.{self.render_method}(), which "
                "does not exist; build the env with rendering on (e.g. render_mode='rgb_array')."
            )
        args = (data,) if self.pass_tensordict else ()
        image = method(*args, **self.render_kwargs)
        if isinstance(image, list):
            image = torch.stack([self._tensor(i) for i in image])
        else:
            image = self._tensor(image)
        return image

    def _tensor(self, image: Any) -> torch.Tensor:
        if image is None:
            raise HubError(
                "the env's render() returned None: build it with rendering to images on "
                "(e.g. render_mode='rgb_array')."
            )
        out = torch.as_tensor(np.asarray(image) if not isinstance(image, torch.Tensor) else image)
        return self.preproc(out) if self.preproc is not None else out

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        if self._sample is None:
            parent = self.parent
            if parent is None:
                raise HubError("PixelRenderTransform renders its env: use it in one.")
            data = parent.reset()
            self._sample = self._render(parent, data)
        sample = self._sample
        batch = observation_spec.shape
        batched = len(sample.shape) > len(batch) and sample.shape[: len(batch)] == batch and batch
        self._event_shape = sample.shape[len(batch) :] if batched else sample.shape
        shape = batch + self._event_shape
        observation_spec[self.out_key] = Bounded(
            0, 255, shape=shape, dtype=sample.dtype, device=observation_spec.device
        )
        return observation_spec

    def _write(self, data: TensorDictBase) -> TensorDictBase:
        parent = self.parent
        image = self._render(parent, data)
        shape = data.batch_size + self._event_shape
        if image.shape != shape:
            image = image.expand(shape)
        data.set(self.out_key, image)
        return data

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        return self._write(tensordict)
