"""Where the frames of a running env come from: :class:`FrameSource` takes the envs' frames
after each step, from ``env.render_frames(data)`` or else from an image observation.

The choice is made at the first :meth:`FrameSource.grab_envs`, after the env's first reset
(gym envs refuse to render before it): ``render_frames()`` when it gives frames (the full RGB
screen where the env renders: EnvPool or gymnasium made with ``render_mode="rgb_array"``,
dm_control); else the ``"pixels"`` observation; else the first uint8 observation shaped like an
image or a stack of images (EnvPool's Atari ``4 x 84 x 84``). Every image becomes a frame by the
rule of :mod:`hub.media.frames`.

Example:
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> env = SimpleNamespace(batch_size=(2,),
    ...                       render_frames=lambda data: np.zeros((2, 6, 6, 3), np.uint8))
    >>> source = FrameSource.for_env(env, "fake:Env", observation_spec=None)
    >>> source.kind, len(source.grab_envs({}, [0, 1])), source.grab({}).shape
    ('render_frames()', 2, (6, 6, 3))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hub.errors import NoFramesError
from hub.media.frames import frames_of, image_observation_key, no_frames_message, to_frame, to_numpy

__all__ = ["FrameSource"]

RENDERED = "render_frames()"


class FrameSource:
    """Takes the frames of chosen envs of a batch after each step (see the module docstring).

    Args:
        kind: what the frames come from (``"render_frames()"``, ``"observation 'pixels'"``).
        grab_fn: the env's images, batch dims first, given the data the env just returned.
        batch_size: the env's batch size.
        what: the env's name in errors (its URI).
        fallback: ``(kind, grab_fn)`` of an image observation, taken when the rendered frames
            fail or are missing (checked at the first grab only).
    """

    def __init__(
        self,
        kind: str,
        grab_fn: Callable[[Any], Any],
        batch_size: Sequence[int],
        *,
        what: str = "the env",
        fallback: tuple[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        self._kind = kind
        self._grab = grab_fn
        self._batch_size = tuple(batch_size)
        self._what = what
        self._checked = kind != RENDERED
        self._fallback = fallback

    @property
    def kind(self) -> str:
        """What the frames come from: ``"render_frames()"``, or an image observation
        (``"observation 'pixels'"``), which replaces the first when it gives no frames."""
        return self._kind

    def grab(self, data: Any) -> np.ndarray:
        """The frame of the first env, given the data the env just returned."""
        return self.grab_envs(data, [0])[0]

    def grab_envs(self, data: Any, env_ids: Sequence[int]) -> list[np.ndarray]:
        """The frames of the envs ``env_ids`` (indices into the flattened batch); a source that
        gives one image for the whole batch gives one frame."""
        images = self._images(data)
        if not self._batch_size:
            return [to_frame(images)]
        return frames_of(images, len(self._batch_size), env_ids)

    def _images(self, data: Any) -> Any:
        if self._checked:
            return self._grab(data)
        try:
            images = self._grab(data)
        except NoFramesError as err:  # the env does not render (as it was made)
            if self._fallback is None:
                raise NoFramesError(f"{self._what}: {err}") from err
            images = None
        except Exception as err:  # noqa: BLE001 - rendering that fails: use the observation
            if self._fallback is None:
                raise NoFramesError(
                    no_frames_message(self._what, f"its render_frames() failed ({err})")
                ) from err
            images = None
        return self._check_rendered(images, data)

    def _check_rendered(self, images: Any, data: Any) -> Any:
        """On the first rendered frames: are there any, and do they carry the batch dims? An
        image observation is taken instead when there are none, or one image for a batch."""
        batched = images is not None and _is_batched(images, self._batch_size)
        if self._fallback is not None and (images is None or (self._batch_size and not batched)):
            self._kind, self._grab = self._fallback
            self._checked = True
            return self._grab(data)
        if images is None:
            raise NoFramesError(no_frames_message(self._what, "its render_frames() gave nothing"))
        if not batched:
            self._batch_size = ()
        self._checked = True
        return images

    @classmethod
    def for_env(cls, env: Any, what: str, observation_spec: Any) -> FrameSource:
        """The frame source of ``env`` (``what`` names it in errors).

        Raises:
            NoFramesError: the env neither renders nor has an image observation.
        """
        batch_size = tuple(env.batch_size)
        key = image_observation_key(observation_spec, len(batch_size))
        observed = None
        if key is not None:
            observed = (f"observation {key!r}", lambda data: data.get(key))
        render_frames = getattr(env, "render_frames", None)
        if not callable(render_frames):
            if observed is None:
                raise NoFramesError(
                    no_frames_message(what, "it has no image observation and no render_frames()")
                )
            return cls(observed[0], observed[1], batch_size, what=what)

        def rendered(data: Any) -> Any:
            return _images_or_none(render_frames(data))

        return cls(RENDERED, rendered, batch_size, what=what, fallback=observed)


def _images_or_none(images: Any) -> Any:
    """Rendered images as one array; ``None`` for nothing (a gym env made without a render
    mode renders ``None``). A list or tuple of frames (one per env) is stacked."""
    if images is None:
        return None
    if isinstance(images, (tuple, list)):
        if not images or any(image is None for image in images):
            return None
        return np.stack([to_numpy(image) for image in images])
    array = to_numpy(images)
    return None if array.dtype == object else array


def _is_batched(images: Any, batch_size: Sequence[int]) -> bool:
    """Whether rendered images carry the batch dims first (one image per env)."""
    if not batch_size:
        return False
    shape = tuple(to_numpy(images).shape)
    return len(shape) >= len(batch_size) + 2 and shape[: len(batch_size)] == tuple(batch_size)
