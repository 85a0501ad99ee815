"""Image transforms in pure torch: ``ToTensorImage``, ``Resize``, ``CenterCrop``, ``GrayScale``.

Images are channels-last ``uint8`` (``H x W x C``) as envs render them; ``ToTensorImage``
makes them channels-first floats in ``[0, 1]`` (``C x H x W``), the layout the other image
transforms work on (they also accept ``uint8`` channels-first images and keep the dtype).

Example:
    >>> import hub
    >>> from hub.transforms import Compose, Resize, ToTensorImage, TransformedEnv
    >>> base = hub.make_env("hub:Pendulum", from_pixels=True)
    >>> env = TransformedEnv(base, Compose(ToTensorImage(in_keys=["pixels"]),
    ...                                    Resize(32, 32, in_keys=["pixels"])))
    >>> env.reset()["pixels"].shape, env.observation_spec["pixels"].shape
    (torch.Size([3, 32, 32]), torch.Size([3, 32, 32]))
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F

from hub.specs import Bounded, TensorSpec, Unbounded
from hub.transforms._utils import NestedKey, map_spec_shape
from hub.transforms.transform import Transform

__all__ = ["ToTensorImage", "Resize", "CenterCrop", "GrayScale"]

_GRAY = (0.2989, 0.587, 0.114)


def _pixels_keys(
    in_keys: NestedKey | Iterable[NestedKey] | None,
) -> NestedKey | Iterable[NestedKey]:
    return ["pixels"] if in_keys is None else in_keys


def _image_spec(spec: TensorSpec, shape: tuple[int, ...], dtype: torch.dtype) -> TensorSpec:
    """A spec of images of ``shape``, with the scalar range of ``spec`` when it has one."""
    if isinstance(spec, Bounded):
        low = spec.low.min().to(dtype)
        high = spec.high.max().to(dtype)
        return Bounded(low, high, shape=shape, device=spec.device, dtype=dtype)
    return Unbounded(shape, device=spec.device, dtype=dtype)


def _check_image(value: torch.Tensor, name: str) -> None:
    if value.ndim < 3:
        raise ValueError(
            f"{name} works on images (..., C, H, W); got a tensor of shape {list(value.shape)}. "
            "Put ToTensorImage (or PermuteTransform) first for channels-last images."
        )


def _as_float(value: torch.Tensor) -> torch.Tensor:
    return value if value.is_floating_point() else value.to(torch.float32)


def _back(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return value.to(dtype)
    info = torch.iinfo(dtype)
    return value.round().clamp(info.min, info.max).to(dtype)


class ToTensorImage(Transform):
    """Channels-last images (``H x W x C``, usually ``uint8``) -> channels-first floats in
    ``[0, 1]`` (``C x H x W``).

    Args:
        from_int: divide by 255 (default: when the input is an integer dtype).
        unsqueeze: add a leading dim of size 1 to a single image.
        dtype: the output dtype (default ``torch.float32``).
        in_keys: default ``["pixels"]``.

    Example:
        >>> import hub
        >>> from hub.transforms import ToTensorImage, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum", from_pixels=True, pixels_size=8),
        ...                      ToTensorImage())
        >>> px = env.reset()["pixels"]
        >>> px.shape, px.dtype, float(px.max()) <= 1.0
        (torch.Size([3, 8, 8]), torch.float32, True)
    """

    def __init__(
        self,
        from_int: bool | None = None,
        unsqueeze: bool = False,
        dtype: torch.dtype | None = None,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(_pixels_keys(in_keys), out_keys)
        self.from_int = from_int
        self.unsqueeze = unsqueeze
        self.dtype = dtype if dtype is not None else torch.float32

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        _check_image(value, "ToTensorImage")
        scale = self.from_int if self.from_int is not None else not value.is_floating_point()
        out = value.permute(*range(value.ndim - 3), -1, -3, -2).to(self.dtype)
        if scale:
            out = out / 255
        if self.unsqueeze:
            out = out.unsqueeze(-4)
        return out.contiguous()

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        if len(spec.shape) < 3:
            raise ValueError(f"ToTensorImage needs image specs (H, W, C), got {spec!r}")
        *lead, h, w, c = spec.shape
        shape = (*lead, c, h, w) if not self.unsqueeze else (*lead, 1, c, h, w)
        scale = self.from_int if self.from_int is not None else not spec.dtype.is_floating_point
        if scale:
            return Bounded(0.0, 1.0, shape=shape, device=spec.device, dtype=self.dtype)
        return _image_spec(spec, shape, self.dtype)


class Resize(Transform):
    """Resize channels-first images (``..., C, H, W``) to ``(w, h)`` in their last two dims.

    Args:
        w, h: the new size of the last two dims (``h`` defaults to ``w``).
        interpolation: ``"bilinear"`` (default), ``"nearest"``, ``"bicubic"`` or ``"area"``.
        in_keys: default ``["pixels"]``.

    Example:
        >>> import torch
        >>> from hub.transforms import Resize
        >>> Resize(4, 6)._apply_transform(torch.rand(2, 3, 8, 8)).shape
        torch.Size([2, 3, 4, 6])
    """

    def __init__(
        self,
        w: int,
        h: int | None = None,
        interpolation: str = "bilinear",
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(_pixels_keys(in_keys), out_keys)
        if interpolation not in ("bilinear", "nearest", "bicubic", "area"):
            raise ValueError(
                f"interpolation must be 'bilinear', 'nearest', 'bicubic' or 'area', "
                f"got {interpolation!r}"
            )
        self.w = int(w)
        self.h = int(h) if h is not None else int(w)
        self.interpolation = interpolation

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        _check_image(value, "Resize")
        lead = value.shape[:-3]
        flat = _as_float(value.reshape(-1, *value.shape[-3:]))
        kwargs = {"align_corners": False} if self.interpolation in ("bilinear", "bicubic") else {}
        out = F.interpolate(flat, size=(self.w, self.h), mode=self.interpolation, **kwargs)
        return _back(out, value.dtype).reshape(*lead, *out.shape[-3:])

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        shape = (*spec.shape[:-2], self.w, self.h)
        return _image_spec(spec, shape, spec.dtype)

    def _extra_repr(self) -> str:
        return f"w={self.w}, h={self.h}, {super()._extra_repr()}"


class CenterCrop(Transform):
    """Keep the central ``w x h`` window of the last two dims.

    Example:
        >>> import torch
        >>> from hub.transforms import CenterCrop
        >>> CenterCrop(2)._apply_transform(torch.arange(16.).reshape(1, 4, 4)).tolist()
        [[[5.0, 6.0], [9.0, 10.0]]]
    """

    def __init__(
        self,
        w: int,
        h: int | None = None,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(_pixels_keys(in_keys), out_keys)
        self.w = int(w)
        self.h = int(h) if h is not None else int(w)

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        height, width = value.shape[-2:]
        if self.w > height or self.h > width:
            raise ValueError(
                f"CenterCrop({self.w}, {self.h}) is larger than the image ({height}x{width})."
            )
        top = (height - self.w) // 2
        left = (width - self.h) // 2
        return value[..., top : top + self.w, left : left + self.h]

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return map_spec_shape(spec, self._apply_transform, "CenterCrop")


class GrayScale(Transform):
    """Channels-first RGB images (``..., 3, H, W``) -> one luminance channel (``..., 1, H, W``).

    Example:
        >>> import torch
        >>> from hub.transforms import GrayScale
        >>> GrayScale()._apply_transform(torch.ones(3, 2, 2)).shape
        torch.Size([1, 2, 2])
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(_pixels_keys(in_keys), out_keys)

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        _check_image(value, "GrayScale")
        if value.shape[-3] != 3:
            raise ValueError(
                f"GrayScale needs 3 channels in dim -3 (C, H, W); got shape {list(value.shape)}."
            )
        weights = torch.tensor(_GRAY, dtype=torch.float32, device=value.device).reshape(3, 1, 1)
        out = (_as_float(value) * weights).sum(-3, keepdim=True)
        return _back(out, value.dtype)

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        shape = (*spec.shape[:-3], 1, *spec.shape[-2:])
        return _image_spec(spec, shape, spec.dtype)
