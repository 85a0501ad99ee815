"""Shape transforms: ``FlattenObservation``, ``UnsqueezeTransform``, ``SqueezeTransform``,
``PermuteTransform``, ``CatTensors``.

Dims are counted from the end (negative), so that the transforms work whatever the batch size.

Example:
    >>> import hub
    >>> from hub.transforms import TransformedEnv, UnsqueezeTransform
    >>> env = TransformedEnv(hub.make_env("hub:Pendulum"),
    ...                      UnsqueezeTransform(-2, in_keys=["observation"]))
    >>> env.reset()["observation"].shape
    torch.Size([1, 3])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from tensordict import TensorDictBase

from hub.specs import Bounded, Composite, TensorSpec, Unbounded
from hub.transforms._utils import NestedKey, drop_keys, key_list, map_spec_shape, norm_key
from hub.transforms.transform import Transform

__all__ = [
    "FlattenObservation",
    "UnsqueezeTransform",
    "SqueezeTransform",
    "PermuteTransform",
    "CatTensors",
]


def _negative(dim: int, name: str, allow_positive: bool = False) -> int:
    if dim >= 0 and not allow_positive:
        raise ValueError(
            f"{name} takes dims counted from the end (negative, e.g. -1), got {dim}: a positive "
            "dim would depend on the batch size. Pass allow_positive_dim=True if you mean it."
        )
    return dim


class _ShapeTransform(Transform):
    """A transform whose forward and inverse only move elements (specs follow ``map_spec_shape``)."""

    def _forward(self, value: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _backward(self, value: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return self._forward(value)

    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return self._backward(value)

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return map_spec_shape(spec, self._forward, type(self).__name__)

    _transform_inv_spec = _transform_spec


class FlattenObservation(_ShapeTransform):
    """Flatten dims ``first_dim`` to ``last_dim`` (counted from the end) into one.

    Example:
        >>> import torch
        >>> from hub.transforms import FlattenObservation
        >>> FlattenObservation(-3, -1, in_keys=["pixels"])._apply_transform(torch.zeros(5, 3, 4, 4)).shape
        torch.Size([5, 48])
    """

    def __init__(
        self,
        first_dim: int,
        last_dim: int,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        allow_positive_dim: bool = False,
    ) -> None:
        super().__init__(in_keys if in_keys is not None else ["pixels"], out_keys)
        self.first_dim = _negative(first_dim, "FlattenObservation", allow_positive_dim)
        self.last_dim = _negative(last_dim, "FlattenObservation", allow_positive_dim)

    def _forward(self, value: torch.Tensor) -> torch.Tensor:
        return value.flatten(self.first_dim, self.last_dim)

    def _extra_repr(self) -> str:
        return f"first_dim={self.first_dim}, last_dim={self.last_dim}, {super()._extra_repr()}"


class UnsqueezeTransform(_ShapeTransform):
    """Insert a dim of size 1 at ``dim`` (counted from the end); the inverse removes it.

    Example:
        >>> import torch
        >>> from hub.transforms import UnsqueezeTransform
        >>> UnsqueezeTransform(-1, in_keys=["x"])._apply_transform(torch.zeros(2, 3)).shape
        torch.Size([2, 3, 1])
    """

    def __init__(
        self,
        dim: int,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        allow_positive_dim: bool = False,
    ) -> None:
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        self.dim = _negative(dim, "UnsqueezeTransform", allow_positive_dim)

    def _forward(self, value: torch.Tensor) -> torch.Tensor:
        return value.unsqueeze(self.dim)

    def _backward(self, value: torch.Tensor) -> torch.Tensor:
        return value.squeeze(self.dim)

    def _extra_repr(self) -> str:
        return f"dim={self.dim}, {super()._extra_repr()}"


class SqueezeTransform(UnsqueezeTransform):
    """Remove the dim of size 1 at ``dim`` (counted from the end); the inverse adds it back.

    Example:
        >>> import torch
        >>> from hub.transforms import SqueezeTransform
        >>> SqueezeTransform(-1, in_keys=["x"])._apply_transform(torch.zeros(2, 1)).shape
        torch.Size([2])
    """

    def _forward(self, value: torch.Tensor) -> torch.Tensor:
        if value.shape[self.dim] != 1:
            raise ValueError(
                f"SqueezeTransform(dim={self.dim}) got a tensor of shape {list(value.shape)}, "
                "whose dim is not of size 1."
            )
        return value.squeeze(self.dim)

    def _backward(self, value: torch.Tensor) -> torch.Tensor:
        return value.unsqueeze(self.dim)


class PermuteTransform(_ShapeTransform):
    """Permute the trailing dims: ``dims`` is a reordering of ``[-len(dims), ..., -1]``.

    Example:
        >>> import torch
        >>> from hub.transforms import PermuteTransform
        >>> hwc_to_chw = PermuteTransform((-1, -3, -2), in_keys=["pixels"])
        >>> hwc_to_chw._apply_transform(torch.zeros(8, 6, 3)).shape
        torch.Size([3, 8, 6])
    """

    def __init__(
        self,
        dims: Sequence[int],
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        dims = [int(d) for d in dims]
        n = len(dims)
        if sorted(dims) != list(range(-n, 0)):
            raise ValueError(
                f"PermuteTransform needs a reordering of {list(range(-n, 0))} (dims counted "
                f"from the end), got {dims}."
            )
        self.dims = dims
        self._inverse = [dims.index(d) - n for d in range(-n, 0)]

    def _permute(self, value: torch.Tensor, order: list[int]) -> torch.Tensor:
        lead = value.ndim - len(order)
        return value.permute(*range(lead), *(value.ndim + d for d in order))

    def _forward(self, value: torch.Tensor) -> torch.Tensor:
        return self._permute(value, self.dims)

    def _backward(self, value: torch.Tensor) -> torch.Tensor:
        return self._permute(value, self._inverse)

    def _extra_repr(self) -> str:
        return f"dims={self.dims}, {super()._extra_repr()}"


class CatTensors(Transform):
    """Concatenate entries along ``dim`` into ``out_key`` (and drop them, with ``del_keys``).

    Args:
        in_keys: the entries to concatenate (sorted by name unless ``sort=False``).
        out_key: the new entry.
        dim: the dim to concatenate along (counted from the end).
        del_keys: remove the ``in_keys`` from the outputs and the specs.
        unsqueeze_if_needed: entries with no dim of their own get one first.
        sort: sort ``in_keys`` (so that the layout does not depend on their order).

    Example:
        >>> import hub
        >>> from hub.transforms import CatTensors, TransformedEnv
        >>> cat = CatTensors(["observation", "thdot"], "obs_vector", del_keys=False)
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), cat)
        >>> env.reset()["obs_vector"].shape
        torch.Size([4])
    """

    def __init__(
        self,
        in_keys: Sequence[NestedKey],
        out_key: NestedKey = "observation_vector",
        dim: int = -1,
        del_keys: bool = True,
        unsqueeze_if_needed: bool = True,
        sort: bool = True,
    ) -> None:
        keys = key_list(in_keys)
        if not keys:
            raise ValueError("CatTensors needs at least one in_key.")
        if sort:
            keys = sorted(keys, key=lambda k: k if isinstance(k, str) else ".".join(k))
        super().__init__()
        self.out_key = norm_key(out_key)
        self.dim = _negative(dim, "CatTensors")
        self.del_keys = del_keys
        self.unsqueeze_if_needed = unsqueeze_if_needed
        self._in_keys_set = keys

    @property
    def in_keys(self) -> list[NestedKey]:
        return self._in_keys_set

    @property
    def out_keys(self) -> list[NestedKey]:
        return [self.out_key]

    def _prepare(self, values: list[torch.Tensor], batch_dims: int) -> list[torch.Tensor]:
        if not self.unsqueeze_if_needed:
            return values
        return [v.unsqueeze(-1) if v.ndim == batch_dims else v for v in values]

    def _cat(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        values = []
        for key in self._in_keys_set:
            value = tensordict.get(key, None)
            if value is None:
                if strict:
                    raise KeyError(f"CatTensors reads {key!r}, which is not in the data.")
                return tensordict
            values.append(value)
        values = self._prepare(values, tensordict.batch_dims)
        dtype = values[0].dtype
        for v in values[1:]:
            dtype = torch.promote_types(dtype, v.dtype)
        tensordict.set(self.out_key, torch.cat([v.to(dtype) for v in values], self.dim))
        if self.del_keys:
            for key in self._in_keys_set:
                if key != self.out_key:
                    tensordict.del_(key)
        return tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return self._cat(next_tensordict, strict=True)

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        return self._cat(tensordict_reset, strict=False)

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        return self._cat(tensordict, strict=True)

    __call__ = forward

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        missing = [k for k in self._in_keys_set if k not in observation_spec]
        if missing:
            raise KeyError(
                f"CatTensors concatenates {missing}, which are not observations of this env "
                f"(observations: {observation_spec.keys(True, True)})."
            )
        batch = len(observation_spec.shape)
        specs = [observation_spec[k] for k in self._in_keys_set]
        if self.unsqueeze_if_needed:
            specs = [s if s.ndim > batch else _unsqueeze_spec(s) for s in specs]
        dtype = specs[0].dtype
        for s in specs[1:]:
            dtype = torch.promote_types(dtype, s.dtype)
        shapes = [s.shape for s in specs]
        base = list(shapes[0])
        base[self.dim] = sum(shape[self.dim] for shape in shapes)
        if all(isinstance(s, Bounded) for s in specs):
            low = torch.cat([s.low.to(dtype) for s in specs], self.dim)
            high = torch.cat([s.high.to(dtype) for s in specs], self.dim)
            out: TensorSpec = Bounded(low, high, shape=base, dtype=dtype)
        else:
            out = Unbounded(base, dtype=dtype)
        observation_spec[self.out_key] = out
        if self.del_keys:
            drop_keys(observation_spec, [k for k in self._in_keys_set if k != self.out_key])
        return observation_spec

    def _extra_repr(self) -> str:
        return f"in_keys={self._in_keys_set}, out_key={self.out_key!r}, dim={self.dim}"


def _unsqueeze_spec(spec: TensorSpec) -> TensorSpec:
    return map_spec_shape(spec, lambda t: t.unsqueeze(-1), "CatTensors")
