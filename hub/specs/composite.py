"""``Composite``: a dict of specs with nested keys, the spec of a whole tensordict.

Example:
    >>> import torch
    >>> from hub.specs import Composite, Unbounded, Categorical
    >>> spec = Composite(obs=Unbounded((4, 3)), shape=(4,))
    >>> spec["agent", "action"] = Categorical(2, shape=(4,))
    >>> spec.keys(include_nested=True, leaves_only=True)
    ['obs', ('agent', 'action')]
    >>> spec.rand().batch_size
    torch.Size([4])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

from hub.errors import SpecMismatchError
from hub.specs._shapes import (
    as_device,
    as_shape,
    check_expand,
    expand_args,
    index_shape,
    safe_shape,
    same_device,
)
from hub.specs._tensors import describe
from hub.specs.base import TensorSpec

__all__ = ["Composite"]

_MISSING = object()


def _probe_new_unsafe() -> Any:
    """``TensorDict._new_unsafe`` skips the checks that our specs already guarantee."""
    try:
        TensorDict._new_unsafe({}, batch_size=torch.Size(()), device=None, nested=False)
    except (AttributeError, TypeError):  # pragma: no cover - older or newer tensordict
        return None
    return TensorDict._new_unsafe


_NEW_UNSAFE = _probe_new_unsafe()


def _make_td(data: dict, batch_size: torch.Size, device: torch.device | None) -> TensorDict:
    """A TensorDict from values built by specs (their shapes are right by construction)."""
    if _NEW_UNSAFE is not None:
        return _NEW_UNSAFE(data, batch_size=batch_size, device=device, nested=False)
    return TensorDict(data, batch_size=batch_size, device=device)  # pragma: no cover


def _unravel(key: Any) -> tuple[str, ...]:
    """A string or (nested) tuple of strings -> a flat tuple of strings."""
    if isinstance(key, str):
        return (key,)
    if isinstance(key, tuple) and key:
        out: list[str] = []
        for part in key:
            out.extend(_unravel(part))
        return tuple(out)
    raise TypeError(f"Composite keys are strings or non-empty tuples of strings, got {key!r}")


def _is_key(key: Any) -> bool:
    return isinstance(key, str) or (
        isinstance(key, tuple) and bool(key) and all(isinstance(k, str | tuple) for k in key)
    )


def _display(parts: tuple[str, ...]) -> str | tuple[str, ...]:
    return parts[0] if len(parts) == 1 else parts


def _cast(spec: TensorSpec, dtype: torch.dtype) -> TensorSpec:
    if isinstance(spec, Composite):
        return spec.to(dtype)
    if spec.dtype is not None and spec.dtype.is_floating_point:
        return spec.to(dtype)
    return spec.clone()


class SpecKeyError(KeyError):
    """A key is not in a Composite (a ``KeyError`` whose message is not quoted)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Composite(TensorSpec):
    """``Composite(spec_dict=None, *, shape=None, device=None, **specs)``: specs by key.

    Keys are strings, or tuples of strings for nested entries. Every child's shape starts with
    the Composite's ``shape`` (its batch dims). ``device=None`` lets children keep their own
    devices; otherwise children are moved to ``device``. A locked Composite (``lock_()``)
    refuses changes until ``unlock_()``.

    Example:
        >>> from hub.specs import Composite, Unbounded
        >>> spec = Composite({"obs": Unbounded(3)}, reward=Unbounded(1))
        >>> ("obs" in spec, len(spec))
        (True, 2)
        >>> spec.zero()["reward"]
        tensor([0.])
    """

    def __init__(
        self,
        spec_dict: Mapping[Any, Any] | None = None,
        *,
        shape: Any = None,
        device: Any = None,
        **specs: Any,
    ) -> None:
        super().__init__(shape, device, None)
        self._specs: dict[str, TensorSpec] = {}
        self._locked = False
        if spec_dict is not None:
            for key, spec in spec_dict.items():
                self[key] = spec
        for key, spec in specs.items():
            self[key] = spec

    # ----------------------------------------------------------------- shape
    @property
    def shape(self) -> torch.Size:
        """The batch dims shared by every child; settable when every child starts with it."""
        return self._shape

    @shape.setter
    def shape(self, value: Any) -> None:
        self._check_unlocked("shape")
        new = as_shape(value)
        for key, spec in self._specs.items():
            if spec.shape[: len(new)] != new:
                raise ValueError(
                    f"cannot set the Composite's shape to {list(new)}: entry {key!r} has shape "
                    f"{list(spec.shape)}, which does not start with it"
                )
        self._shape = new
        self._safe_shape = safe_shape(new)
        self._safe_tuple = tuple(self._safe_shape)

    # ------------------------------------------------------------------ keys
    def _check_unlocked(self, key: Any) -> None:
        if self._locked:
            raise RuntimeError(
                f"cannot change {key!r}: this Composite is locked (an env locks its specs once "
                f"they are set). Call spec.unlock_() first, change it, then spec.lock_() again, "
                f"or work on spec.clone()"
            )

    def _missing(self, key: Any) -> SpecKeyError:
        keys = self.keys(include_nested=True)
        return SpecKeyError(f"key {key!r} is not in this Composite; its keys are {keys}")

    def _set_child(self, name: str, spec: Any, key: Any) -> None:
        self._check_unlocked(key)
        if isinstance(spec, Mapping):
            spec = Composite(spec, shape=self._shape, device=self.device)
        if not isinstance(spec, TensorSpec):
            raise TypeError(
                f"Composite entries must be specs (Unbounded, Bounded, ..., Composite); got "
                f"{type(spec).__name__} for key {key!r}"
            )
        n = len(self._shape)
        if spec.shape[:n] != self._shape:
            raise ValueError(
                f"the spec for key {key!r} has shape {list(spec.shape)}, which does not start "
                f"with the Composite's shape {list(self._shape)}; child shapes hold the batch "
                f"dims first: build it with shape=({', '.join(map(str, self._shape))}, ...) or "
                f"call spec.expand(*composite.shape, *spec.shape)"
            )
        if self.device is not None and spec.device != self.device:
            spec = spec.to(self.device)
        self._specs[name] = spec

    def __setitem__(self, key: Any, spec: Any) -> None:
        if isinstance(key, str):
            self._set_child(key, spec, key)
            return
        parts = _unravel(key)
        node = self
        i = 0
        while i < len(parts) - 1 and parts[i] in node._specs:
            child = node._specs[parts[i]]
            if not isinstance(child, Composite):
                raise KeyError(
                    f"cannot set {key!r}: {_display(parts[: i + 1])!r} holds a "
                    f"{type(child).__name__}, not a Composite"
                )
            node = child
            i += 1
        if i == len(parts) - 1:
            node._set_child(parts[-1], spec, _display(parts))
            return
        # build the missing intermediate Composites detached, attach them once all is valid
        node._check_unlocked(_display(parts))
        top = Composite(shape=node._shape, device=node.device)
        current = top
        for part in parts[i + 1 : -1]:
            nxt = Composite(shape=node._shape, device=node.device)
            current._specs[part] = nxt
            current = nxt
        current._set_child(parts[-1], spec, _display(parts))
        node._specs[parts[i]] = top

    def set(self, key: Any, spec: TensorSpec) -> Composite:
        """Set ``key`` (nested keys create the intermediate Composites); returns ``self``."""
        self[key] = spec
        return self

    def __getitem__(self, key: Any) -> Any:
        """A child by key (``c["a"]``, ``c["a", "b"]``), or an indexed Composite (``c[0]``)."""
        if isinstance(key, str):
            try:
                return self._specs[key]
            except KeyError:
                raise self._missing(key) from None
        if not _is_key(key):
            return self._index(key)
        node: Any = self
        for part in _unravel(key):
            child = node._specs.get(part, _MISSING) if isinstance(node, Composite) else _MISSING
            if child is _MISSING:
                raise self._missing(key)
            node = child
        return node

    def get(self, key: Any, default: Any = None) -> Any:
        """The child at ``key``, or ``default`` when there is none."""
        try:
            return self[key]
        except KeyError:
            return default

    def __delitem__(self, key: Any) -> None:
        parts = _unravel(key)
        parent = self[parts[:-1]] if len(parts) > 1 else self
        if not isinstance(parent, Composite) or parts[-1] not in parent._specs:
            raise self._missing(key)
        parent._check_unlocked(key)
        del parent._specs[parts[-1]]

    def __contains__(self, key: Any) -> bool:
        if isinstance(key, str):
            return key in self._specs
        if not _is_key(key):
            return False
        node: Any = self
        for part in _unravel(key):
            if not isinstance(node, Composite) or part not in node._specs:
                return False
            node = node._specs[part]
        return True

    def __len__(self) -> int:
        return len(self._specs)

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def _walk(
        self, include_nested: bool, leaves_only: bool, prefix: tuple[str, ...] = ()
    ) -> Iterator[tuple[Any, TensorSpec]]:
        for name, spec in self._specs.items():
            parts = (*prefix, name)
            is_node = isinstance(spec, Composite)
            if not (leaves_only and is_node):
                yield _display(parts), spec
            if include_nested and is_node:
                yield from spec._walk(True, leaves_only, parts)

    def keys(self, include_nested: bool = False, leaves_only: bool = False) -> list[Any]:
        """The keys; nested ones (with ``include_nested=True``) are tuples of strings."""
        return [key for key, _ in self._walk(include_nested, leaves_only)]

    def values(self, include_nested: bool = False, leaves_only: bool = False) -> list[TensorSpec]:
        """The child specs, in the order of :meth:`keys`."""
        return [spec for _, spec in self._walk(include_nested, leaves_only)]

    def items(
        self, include_nested: bool = False, leaves_only: bool = False
    ) -> list[tuple[Any, TensorSpec]]:
        """``(key, spec)`` pairs, in the order of :meth:`keys`."""
        return list(self._walk(include_nested, leaves_only))

    def update(self, other: Composite | Mapping[Any, Any]) -> Composite:
        """Set every entry of ``other``, merging nested Composites; returns ``self``."""
        items = other.items() if isinstance(other, Composite | Mapping) else other
        for key, spec in items:
            mine = self.get(key)
            if isinstance(mine, Composite) and isinstance(spec, Composite | Mapping):
                mine.update(spec)
            else:
                self[key] = spec
        return self

    def empty(self) -> Composite:
        """A Composite with the same shape and device and no entries."""
        return Composite(shape=self._shape, device=self.device)

    def is_empty(self) -> bool:
        """True if there is no leaf spec (nested empty Composites count as empty)."""
        return not any(True for _ in self._walk(True, True))

    # --------------------------------------------------------------- locking
    @property
    def is_locked(self) -> bool:
        """True after :meth:`lock_` (and until :meth:`unlock_`)."""
        return self._locked

    def lock_(self) -> Composite:
        """Refuse any later set or delete, here and in nested Composites; returns ``self``."""
        self._locked = True
        for spec in self._specs.values():
            if isinstance(spec, Composite):
                spec.lock_()
        return self

    def unlock_(self) -> Composite:
        """Allow changes again, here and in nested Composites; returns ``self``."""
        self._locked = False
        for spec in self._specs.values():
            if isinstance(spec, Composite):
                spec.unlock_()
        return self

    # ---------------------------------------------------------------- values
    def rand(self, shape: Any = ()) -> TensorDict:
        """A random TensorDict, batch size ``(*shape, *self.shape)``."""
        data = {key: spec.rand(shape) for key, spec in self._specs.items()}
        return _make_td(data, self._batch_size(shape), self.device)

    def zero(self, shape: Any = ()) -> TensorDict:
        """A zero-filled TensorDict, batch size ``(*shape, *self.shape)``."""
        data = {key: spec.zero(shape) for key, spec in self._specs.items()}
        return _make_td(data, self._batch_size(shape), self.device)

    def one(self, shape: Any = ()) -> TensorDict:
        """A one-filled TensorDict, batch size ``(*shape, *self.shape)``."""
        data = {key: spec.one(shape) for key, spec in self._specs.items()}
        return _make_td(data, self._batch_size(shape), self.device)

    def is_in(self, value: Any) -> bool:
        """True if every entry of the spec is in ``value`` and in its spec (extra keys are ok)."""
        if not isinstance(value, TensorDictBase | Mapping):
            return False
        get = value.get
        for key, spec in self._specs.items():
            item = get(key, _MISSING)
            if item is _MISSING:
                if isinstance(spec, Composite) and spec.is_empty():
                    continue
                return False
            if not spec.is_in(item):
                return False
        return True

    def assert_is_in(self, value: Any, key: Any = None) -> None:
        """Raise :class:`hub.errors.SpecMismatchError` naming the first (nested) key that fails.

        Example:
            >>> import torch
            >>> from tensordict import TensorDict
            >>> from hub.specs import Composite, Bounded
            >>> spec = Composite(agent=Composite(action=Bounded(-1.0, 1.0, shape=(2,))))
            >>> td = TensorDict(agent=TensorDict(action=torch.tensor([0.0, 3.0])))
            >>> spec.assert_is_in(td)
            Traceback (most recent call last):
            ...
            hub.errors.SpecMismatchError: entry ('agent', 'action') does not match its spec: expected Bounded(shape=[2], dtype=float32, low=-1.0, high=1.0), got a tensor of shape [2] and dtype float32 with values [0.0, 3.0], outside [-1.0, 1.0].
        """
        prefix = () if key is None else _unravel(key)
        if not isinstance(value, TensorDictBase | Mapping):
            where = _display(prefix) if prefix else "(root)"
            raise SpecMismatchError(where, expected=self._short_name(), got=describe(value))
        for name, spec in self._specs.items():
            parts = (*prefix, name)
            item = value.get(name, _MISSING)
            if item is _MISSING:
                if isinstance(spec, Composite) and spec.is_empty():
                    continue
                raise SpecMismatchError(
                    _display(parts), expected=repr(spec), got="nothing (the key is missing)"
                )
            if isinstance(spec, Composite):
                spec.assert_is_in(item, key=parts)
            elif not spec.is_in(item):
                raise SpecMismatchError(
                    _display(parts), expected=repr(spec), got=spec.explain(item)
                )

    def explain(self, value: Any) -> str | None:
        """``None`` if ``value`` is in the spec, else what is wrong (naming the key)."""
        try:
            self.assert_is_in(value)
        except SpecMismatchError as err:
            return str(err)
        return None

    def project(self, value: Any) -> Any:
        """A shallow copy of ``value`` with each entry of the spec projected into its spec."""
        out = value.copy() if isinstance(value, TensorDictBase) else dict(value)
        for key, spec in self._specs.items():
            item = value.get(key, _MISSING)
            if item is not _MISSING:
                out[key] = spec.project(item)
        return out

    def encode(self, value: Mapping[str, Any]) -> TensorDict:
        """A (nested) dict of numpy arrays / python values -> a TensorDict of the spec.

        Example:
            >>> import numpy as np
            >>> from hub.specs import Composite, Unbounded
            >>> Composite(obs=Unbounded(2)).encode({"obs": np.array([1.0, 2.0])})["obs"]
            tensor([1., 2.])
        """
        if not isinstance(value, TensorDictBase | Mapping):
            raise TypeError(f"Composite.encode needs a dict (or TensorDict), got {describe(value)}")
        data = {}
        for key, item in value.items():
            spec = self._specs.get(key)
            if spec is None:
                raise SpecKeyError(
                    f"cannot encode key {key!r}: it is not in the spec (keys: {self.keys()}); "
                    f"drop it or add a spec for it"
                )
            data[key] = spec.encode(item)
        return TensorDict(data, batch_size=self._safe_shape, device=self.device)

    # ----------------------------------------------------------- shape ops
    def _from_children(self, shape: torch.Size, specs: dict[str, TensorSpec]) -> Composite:
        out = Composite(shape=shape, device=self.device)
        out._specs = specs
        return out

    def expand(self, *shape: Any) -> Composite:
        """Prepend batch dims to the Composite and all its children."""
        new = check_expand(self._shape, expand_args(shape), self._short_name())
        n = self.ndim
        return self._from_children(
            new, {k: v.expand(*new, *v.shape[n:]) for k, v in self._specs.items()}
        )

    def _index(self, index: Any) -> Composite:
        new, _ = index_shape(self._shape, index, self.ndim, self._short_name())
        return self._from_children(new, {k: v[index] for k, v in self._specs.items()})

    def _dim(self, dim: int, extra: int = 0) -> int:
        ndim = self.ndim + extra
        d = dim + ndim if dim < 0 else dim
        if not 0 <= d < ndim:
            raise ValueError(
                f"dim {dim} is out of range for a Composite of shape {list(self._shape)}"
            )
        return d

    def squeeze(self, dim: int | None = None) -> Composite:
        """Remove size-1 dims of the Composite's shape (from the children too)."""
        if dim is None:
            dims = [d for d, s in enumerate(self._shape) if s == 1]
        else:
            d = self._dim(dim)
            dims = [d] if self._shape[d] == 1 else []
        new = torch.Size([s for i, s in enumerate(self._shape) if i not in dims])
        specs = {}
        for key, spec in self._specs.items():
            for d in reversed(dims):
                spec = spec.squeeze(d)
            specs[key] = spec
        return self._from_children(new, specs)

    def unsqueeze(self, dim: int) -> Composite:
        """Insert a size-1 dim at ``dim`` of the Composite's shape (and in the children)."""
        d = self._dim(dim, extra=1)
        new = torch.Size((*self._shape[:d], 1, *self._shape[d:]))
        return self._from_children(new, {k: v.unsqueeze(d) for k, v in self._specs.items()})

    def _stacked(self, n: int, dim: int) -> Composite:
        d = self._dim(dim, extra=1)
        new = torch.Size((*self._shape[:d], n, *self._shape[d:]))
        return self._from_children(new, {k: v._stacked(n, d) for k, v in self._specs.items()})

    # --------------------------------------------------------------- copies
    def clone(self) -> Composite:
        """A deep, unlocked copy."""
        return self._from_children(self._shape, {k: v.clone() for k, v in self._specs.items()})

    def to(self, dest: Any) -> Composite:
        """Move every child to a device, or cast the floating-point leaves to a float dtype.

        Integer, bool and non-tensor leaves keep their dtype when a dtype is given.
        """
        if isinstance(dest, torch.dtype):
            return self._from_children(
                self._shape, {k: _cast(v, dest) for k, v in self._specs.items()}
            )
        device = as_device(dest)
        out = Composite(shape=self._shape, device=device)
        out._specs = {k: v.to(device) for k, v in self._specs.items()}
        return out

    def __eq__(self, other: object) -> bool:
        if type(other) is not Composite:
            return False
        if self._shape != other._shape or not same_device(self.device, other.device):
            return False
        if self._specs.keys() != other._specs.keys():
            return False
        return all(spec == other._specs[key] for key, spec in self._specs.items())

    __hash__ = None  # type: ignore[assignment]

    def _short_name(self) -> str:
        return f"Composite(shape={list(self._shape)}, keys={self.keys()})"

    def __repr__(self) -> str:
        device = f", device={self.device}" if self.device is not None else ""
        if not self._specs:
            return f"Composite(shape={list(self._shape)}{device})"
        lines = [
            f"    {key}: " + repr(spec).replace("\n", "\n    ") for key, spec in self._specs.items()
        ]
        body = ",\n".join(lines)
        return f"Composite(\n{body},\n    shape={list(self._shape)}{device})"
