"""The one rule that turns an env's image into a frame a person can watch: ``H x W x 3`` uint8.

Every part of hub that shows or records images uses it: ``VideoRecorder``, ``hub rollout
--record`` and the exports' ``render()``.

**Layout** (after the env's batch dims):

* 2 dims: ``H x W``, grayscale;
* 3 dims: ``H x W x C`` when the last dim is 1, 3 or 4 (grayscale, RGB, RGBA); else
  ``C x H x W`` when the first dim is 1 or 3; else a stack of grayscale frames ``N x H x W``
  (EnvPool's Atari ``4 x 84 x 84``), of which the last, newest, is kept;
* 4 dims: a stack of images (``N x H x W x C`` or ``N x C x H x W``): the last is kept and read
  as a 3-dim image.

So a first dim of 4 is 4 stacked frames, not RGBA channels first: renderers give RGBA
channels-last, while 4 stacked frames are the Atari convention.

**Values:** uint8 is kept; ``bool`` becomes 0 or 255; a float image none of whose values exceeds
1 is read as ``[0, 1]`` (``ToTensorImage``'s output) and scaled by 255, any other is read as
``[0, 255]``; NaN becomes 0 and values are clipped to ``[0, 255]``.

**Channels:** grayscale is repeated into RGB; alpha is dropped.

Example:
    >>> import numpy as np
    >>> to_frame(np.zeros((4, 84, 84), dtype=np.uint8)).shape  # 4 stacked grayscale frames
    (84, 84, 3)
    >>> to_frame(np.ones((3, 64, 48), dtype=np.float32))[0, 0].tolist()  # CHW in [0, 1]
    [255, 255, 255]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hub.errors import HubError

__all__ = [
    "HOW_TO_GET_FRAMES",
    "MIN_SIDE",
    "frames_of",
    "image_observation_key",
    "looks_like_image",
    "no_frames_message",
    "to_frame",
    "to_numpy",
    "to_uint8",
]

#: the channel counts of a channels-last image (grayscale, RGB, RGBA)
_CHANNELS_LAST = (1, 3, 4)
#: the channel counts of a channels-first image (a first dim of 4 is a stack of frames)
_CHANNELS_FIRST = (1, 3)
#: the smallest height and width of an observation taken for an image
MIN_SIDE = 8

#: how to get frames from an env, for the errors of envs that give none
HOW_TO_GET_FRAMES = (
    "Make the env render: render_mode='rgb_array' (gymnasium, gym, EnvPool >= 1.0; "
    "`hub rollout ... -k render_mode=rgb_array`); dm_control envs and hub:Pendulum render as "
    "they are. Or give it image observations (from_pixels=True: gym, gymnasium, dm_control, "
    "hub:Pendulum) and record those; or write render_frames() for your env class."
)


def no_frames_message(what: str, reason: str) -> str:
    """The message of an env that gives no frames: what, why, and :data:`HOW_TO_GET_FRAMES`.

    Example:
        >>> no_frames_message("hub:Counting", "it does not render")[:41]
        'hub:Counting gives no frames: it does not'
    """
    return f"{what} gives no frames: {reason}. {HOW_TO_GET_FRAMES}"


def to_numpy(value: Any) -> np.ndarray:
    """A tensor (any dtype, any device), an array or a nested list as a numpy array.

    Example:
        >>> to_numpy([[0, 1]]).shape
        (1, 2)
    """
    if hasattr(value, "detach"):  # a torch tensor: torch is not imported for the check
        value = value.detach().cpu()
        try:
            return value.numpy()
        except TypeError:  # a dtype numpy lacks (bfloat16): through float32
            return value.float().numpy()
    return np.asarray(value)


def to_uint8(image: Any) -> np.ndarray:
    """Pixel values as uint8, by the rule of the module docstring.

    Example:
        >>> to_uint8(np.array([0.0, 0.5, 1.0])).tolist(), to_uint8(np.array([2.0, 300.0])).tolist()
        ([0, 127, 255], [2, 255])
        >>> to_uint8(np.array([True, False])).tolist()
        [255, 0]
    """
    image = to_numpy(image)
    if image.dtype == np.uint8:
        return image
    if image.dtype == np.bool_:
        return image.astype(np.uint8) * 255
    values = image.astype(np.float64)
    if np.issubdtype(image.dtype, np.floating) and values.size:
        finite = values[~np.isnan(values)]
        if finite.size and float(finite.max()) <= 1.0:
            values = values * 255.0
    return np.clip(np.nan_to_num(values, nan=0.0), 0, 255).astype(np.uint8)


def to_frame(image: Any) -> np.ndarray:
    """One ``H x W x 3`` uint8 frame from one env's image (a tensor, an array or a list), by the
    rule of the module docstring.

    Raises:
        HubError: the image has fewer than 2 or more than 4 dims.

    Example:
        >>> to_frame(np.zeros((2, 8, 8, 3), dtype=np.uint8)).shape  # 2 stacked RGB frames
        (8, 8, 3)
        >>> to_frame(np.zeros((8, 8, 4), dtype=np.uint8)).shape  # RGBA
        (8, 8, 3)
    """
    array = to_numpy(image)
    frame = array[-1] if array.ndim == 4 else array  # a stack of images: the newest
    if frame.ndim == 3 and frame.shape[-1] not in _CHANNELS_LAST:
        if frame.shape[0] in _CHANNELS_FIRST:
            frame = np.moveaxis(frame, 0, -1)
        else:  # a stack of grayscale frames
            frame = frame[-1]
    if frame.ndim == 2:
        frame = frame[..., None]
    if frame.ndim != 3:
        raise HubError(
            f"cannot make a frame of an image of shape {tuple(array.shape)}: expected H x W, "
            "H x W x C, C x H x W (C = 1, 3 or 4 channels last; 1 or 3 first), or a stack of "
            "those (N x H x W, N x H x W x C, N x C x H x W)."
        )
    frame = to_uint8(frame)
    if frame.shape[-1] == 1:
        frame = np.repeat(frame, 3, axis=-1)
    return np.ascontiguousarray(frame[..., :3])


def frames_of(
    images: Any, batch_ndim: int, env_ids: Sequence[int] | None = None
) -> list[np.ndarray]:
    """One frame per env (or per env of ``env_ids``: indices into the flattened batch) from
    the images of a batch, whose first ``batch_ndim`` dims are the batch dims.

    Example:
        >>> images = np.zeros((2, 3, 16, 16, 3), dtype=np.uint8)  # a [2, 3] batch of RGB images
        >>> len(frames_of(images, 2)), frames_of(images, 2, env_ids=[5])[0].shape
        (6, (16, 16, 3))
    """
    array = to_numpy(images)
    flat = array.reshape(-1, *array.shape[batch_ndim:])
    picks = range(flat.shape[0]) if env_ids is None else env_ids
    return [to_frame(flat[i]) for i in picks]


def looks_like_image(shape: Sequence[int]) -> bool:
    """Whether one env's value of this shape can be an image or a stack of images: 2 to 4 dims,
    of which the last two, or the two before a channel dim, are at least :data:`MIN_SIDE` (so a
    vector of RAM bytes is not an image).

    Example:
        >>> looks_like_image((4, 84, 84)), looks_like_image((84, 84, 3)), looks_like_image((128,))
        (True, True, False)
    """
    shape = tuple(shape)
    if not 2 <= len(shape) <= 4:
        return False
    sides = shape[-2:] if shape[-1] > 4 else shape[-3:-1]
    return len(sides) == 2 and min(sides) >= MIN_SIDE


def image_observation_key(observation_spec: Any, batch_ndim: int) -> Any:
    """The observation to watch: ``"pixels"``, else the first uint8 leaf (in key order) that
    :func:`looks_like_image`; ``None`` when there is none.

    Example:
        >>> from hub.specs import Composite, Unbounded
        >>> import torch
        >>> spec = Composite(ram=Unbounded((128,), dtype=torch.uint8),
        ...                  screen=Unbounded((4, 84, 84), dtype=torch.uint8))
        >>> image_observation_key(spec, 0)
        'screen'
    """
    if observation_spec is None:
        return None
    keys = list(observation_spec.keys(include_nested=True, leaves_only=True))
    if "pixels" in keys or ("pixels",) in keys:
        return "pixels"
    for key in sorted(keys, key=lambda k: (k,) if isinstance(k, str) else tuple(k)):
        spec = observation_spec[key]
        if str(getattr(spec, "dtype", None)) != "torch.uint8":
            continue
        if looks_like_image(tuple(spec.shape)[batch_ndim:]):
            return key
    return None
