"""The Atari preprocessing pipeline: raw ALE frames -> EnvPool's default observations.

EnvPool's Atari envs (``envpool:Pong-v5``) return 4 stacked grayscale 84x84 ``uint8`` frames
(``4 x 84 x 84``), after up to 30 no-op steps at each reset. Gymnasium's ``ALE/Pong-v5``
returns one RGB frame (``210 x 160 x 3``; both skip 4 frames per step). This pipeline turns
the latter into the former's shape and dtype:

``NoopResetEnv(30)`` -> channels first -> ``GrayScale`` -> ``Resize(84, 84)`` (area) ->
``CatFrames(4, dim=-3)``.

Example:
    >>> import hub
    >>> from hub.transforms import TransformedEnv
    >>> from hub.transforms.atari import atari_preprocessing
    >>> base = hub.make_env("hub:Pendulum", from_pixels=True, pixels_size=96)  # any RGB frames
    >>> env = TransformedEnv(base, atari_preprocessing(noops=0))
    >>> obs = env.reset()["pixels"]
    >>> obs.shape, obs.dtype
    (torch.Size([4, 84, 84]), torch.uint8)
"""

from __future__ import annotations

from hub.transforms._utils import NestedKey
from hub.transforms.compose import Compose
from hub.transforms.frames import CatFrames, NoopResetEnv
from hub.transforms.images import GrayScale, Resize
from hub.transforms.shapes import PermuteTransform
from hub.transforms.transform import Transform

__all__ = ["atari_preprocessing"]


def atari_preprocessing(
    pixels_key: NestedKey = "pixels",
    size: int = 84,
    frame_stack: int = 4,
    noops: int = 30,
    grayscale: bool = True,
) -> Compose:
    """The transforms that give EnvPool-like Atari observations from RGB ALE frames.

    Args:
        pixels_key: the env's image entry (``H x W x 3`` uint8).
        size: the side of the square frames.
        frame_stack: the number of stacked frames (``CatFrames``).
        noops: up to this many no-op steps after each reset (0: none).
        grayscale: one luminance channel (``False`` keeps RGB: ``3 * frame_stack`` channels).

    Example:
        >>> [type(t).__name__ for t in atari_preprocessing()]
        ['NoopResetEnv', 'PermuteTransform', 'GrayScale', 'Resize', 'CatFrames']
    """
    keys = [pixels_key]
    transforms: list[Transform] = []
    if noops:
        transforms.append(NoopResetEnv(noops=noops))
    transforms.append(PermuteTransform((-1, -3, -2), in_keys=keys))
    if grayscale:
        transforms.append(GrayScale(in_keys=keys))
    transforms.append(Resize(size, size, interpolation="area", in_keys=keys))
    transforms.append(CatFrames(frame_stack, dim=-3, in_keys=keys))
    return Compose(*transforms)
