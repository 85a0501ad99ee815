"""Recorders: ``VideoRecorder`` (images of a rollout to a GIF or MP4 file) and
``PixelRenderTransform`` (an env's rendered frames as a ``"pixels"`` observation).

Both use :mod:`hub.media`: images become frames by :func:`hub.media.to_frame`'s rule, and files
are written by :func:`hub.media.write_video`.

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

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.errors import HubError, NoFramesError
from hub.media import frames_of, no_frames_message, tile, write_video
from hub.specs import Bounded, Composite
from hub.transforms._utils import NestedKey, norm_key
from hub.transforms.transform import Transform

__all__ = ["VideoRecorder", "PixelRenderTransform"]


class VideoRecorder(Transform):
    """Keep the images of every step (and reset) and write them as a video with :meth:`dump`.

    Each image becomes a frame by the rule of :func:`hub.media.to_frame` (channels last or
    first, grayscale or RGB(A), uint8, bool or floats in ``[0, 1]``, stacks of frames). With a
    batched env, the frames of all sub-envs are tiled into one near-square grid
    (``make_grid=True``, :func:`hub.media.tile`) or only the first sub-env's are kept. The cache
    grows until ``dump`` (or ``max_frames``, which keeps the newest).

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
        batch_ndim = value.ndim - event
        if self.make_grid:
            frame = tile(frames_of(value, batch_ndim))
        else:
            frame = frames_of(value, batch_ndim, env_ids=[0])[0]
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
    """Write the env's rendered frames in ``"pixels"`` after each step and reset.

    By default the frames are :meth:`hub.EnvBase.render_frames` (given the env's data; batch
    dims first, so a batched env gives one frame per sub-env); ``render_method`` names another
    method of the env (``"render"``: the backend's own, forwarded by wrappers), whose list of
    images (one per sub-env) is stacked. The spec comes from one rendered image, taken when the
    transform is added (this resets the env once).

    Args:
        out_keys: where the image goes (default ``["pixels"]``).
        preproc: a function applied to each rendered image (a tensor) before it is written.
        render_method: the name of the env's method to call (default ``"render_frames"``).
        pass_tensordict: call ``method(data)`` (stateless envs need their data to draw);
            default: for ``render_frames`` only.
        **render_kwargs: passed to the render method.

    Example:
        >>> import hub
        >>> from hub.transforms import PixelRenderTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum", pixels_size=24),
        ...                      PixelRenderTransform())
        >>> env.rollout(2)["next", "pixels"].shape
        torch.Size([2, 24, 24, 3])
    """

    def __init__(
        self,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        preproc: Callable[[torch.Tensor], torch.Tensor] | None = None,
        render_method: str = "render_frames",
        pass_tensordict: bool | None = None,
        **render_kwargs: Any,
    ) -> None:
        super().__init__()
        keys = ["pixels"] if out_keys is None else out_keys
        self.out_key = norm_key(keys if isinstance(keys, str | tuple) else list(keys)[0])
        self.preproc = preproc
        self.render_method = render_method
        if pass_tensordict is None:
            pass_tensordict = render_method == "render_frames"
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
                "does not exist; leave render_method as 'render_frames' (every hub env has it) "
                "or name a method of the env."
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
            raise NoFramesError(
                no_frames_message(f"the env's {self.render_method}()", "it returned None")
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
