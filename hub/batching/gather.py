"""``Gather``: the outputs of a batch's sub-envs (one dict of arrays each) as batch arrays.

A batch-first env steps its sub-envs through their array-level hooks and gets one dict per
sub-env; :meth:`Gather.columns` turns them into one array per key with the sub-env dim first,
in one numpy call per key (no tensor or tensordict per sub-env, no stacking of tensordicts).
Values are checked against the batch's specs: a sub-env whose entry has another shape, or a
dtype that cannot be stored in the spec's without changing kind (a float where the spec holds
integers), is named in a :class:`~hub.errors.SpecMismatchError`.

Example:
    >>> import numpy as np, torch
    >>> from hub.specs import Composite, Unbounded
    >>> specs = Composite(reward=Unbounded((3, 1)), shape=(3,))
    >>> gather = Gather(specs, 3, "SerialEnv")
    >>> out = gather.columns([{"reward": 1.0}, {"reward": 0.5}, None], "step")
    >>> out["reward"].tolist()
    [[1.0], [0.5], [0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from hub.errors import SpecMismatchError
from hub.specs import Composite, NestedKey, NonTensor, TensorSpec, numpy_dtype

__all__ = ["Gather"]


class _Column:
    """What one key's column must be: its row shape and dtype (numpy and torch)."""

    __slots__ = (
        "key",
        "spec",
        "row_shape",
        "shape",
        "size",
        "np_dtype",
        "torch_dtype",
        "non_tensor",
        "casts",
    )

    def __init__(self, key: NestedKey, spec: TensorSpec, n: int) -> None:
        self.key = key
        self.spec = spec
        self.shape = (n, *spec.shape[1:])
        self.row_shape = tuple(spec.shape[1:])
        self.size = int(np.prod(self.shape)) if -1 not in self.shape else -1
        self.torch_dtype = spec.dtype
        self.non_tensor = isinstance(spec, NonTensor)
        try:
            self.np_dtype = numpy_dtype(spec.dtype)
        except (TypeError, KeyError):
            self.np_dtype = None
        self.casts: dict[np.dtype, bool] = {}  # numpy dtypes seen: may they be stored as np_dtype

    def castable(self, have: np.dtype) -> bool:
        """Whether values of dtype ``have`` may be stored in this column (cached per dtype)."""
        ok = self.casts.get(have)
        if ok is None:
            ok = self.casts[have] = _castable(have, self.np_dtype)
        return ok


class Gather:
    """Joins the sub-envs' output dicts of a batch (see the module docstring).

    Args:
        specs: the batch's output specs (observations, rewards, done flags, states), in one
            Composite whose leaves have the batch dim first.
        n: the number of sub-envs.
        owner: names the batched env in errors.
    """

    def __init__(self, specs: Composite, n: int, owner: str) -> None:
        self.n = n
        self.owner = owner
        self.columns_of: dict[NestedKey, _Column] = {
            key: _Column(key, specs[key], n)
            for key in specs.keys(include_nested=True, leaves_only=True)
        }

    def columns(self, outs: Sequence[dict[Any, Any] | None], what: str) -> dict[Any, Any]:
        """One array per key from the sub-envs' dicts (``None``: a sub-env that did not run;
        its rows are zeros). The keys are those of the first dict that is not ``None``."""
        missing = None in outs
        first = outs[0] if not missing else next((o for o in outs if o is not None), None)
        if first is None:
            return {}
        data: dict[Any, Any] = {}
        columns_of = self.columns_of
        join = self._join
        for key in first:
            column = columns_of.get(key)
            if column is None:
                self._raise_unknown(key, f"sub-env {outs.index(first)}'s {what} output")
            if missing:
                values = [o[key] if o is not None else None for o in outs]
            else:
                values = [o[key] for o in outs]
            data[key] = join(column, values, what, None, missing)
        return data

    def batch(self, out: dict[Any, Any], what: str) -> dict[Any, Any]:
        """One array per key from a group's output (one value per sub-env for each key: a
        list, or an array with the sub-env dim first), checked as :meth:`columns` checks the
        sub-envs' dicts. An array already of the column's shape and dtype is kept as it is.

        Example:
            >>> import numpy as np
            >>> from hub.specs import Composite, Unbounded
            >>> gather = Gather(Composite(reward=Unbounded((2, 1)), shape=(2,)), 2, "SerialEnv")
            >>> gather.batch({"reward": [1.0, 0.5]}, "step")["reward"].tolist()
            [[1.0], [0.5]]
        """
        data: dict[Any, Any] = {}
        columns_of = self.columns_of
        for key, values in out.items():
            column = columns_of.get(key)
            if column is None:
                self._raise_unknown(key, f"the sub-envs' {what} output")
            if (
                type(values) is np.ndarray
                and values.dtype == column.np_dtype
                and values.shape == column.shape
            ):
                data[key] = values
            else:
                data[key] = self._join(column, list(values), what, None, False)
        return data

    def rows_over(
        self, base: dict[Any, Any], parts: Sequence[dict[Any, Any] | None], what: str
    ) -> dict[Any, Any]:
        """A batch's reset output after a step: the step's columns ``base``, with the rows of
        the sub-envs that reset (``parts[i]`` is sub-env ``i``'s reset output, ``None`` where
        it did not reset) replaced by their first observations.

        Example:
            >>> import numpy as np
            >>> from hub.specs import Composite, Unbounded
            >>> gather = Gather(Composite(obs=Unbounded((3, 1)), shape=(3,)), 3, "SerialEnv")
            >>> step = {"obs": np.array([[5.0], [6.0], [7.0]], dtype=np.float32)}
            >>> gather.rows_over(step, [None, {"obs": [0.0]}, None], "reset")["obs"].ravel()
            array([5., 0., 7.], dtype=float32)
        """
        index = [i for i, part in enumerate(parts) if part is not None]
        if not index:
            return {}
        first = parts[index[0]]
        data: dict[Any, Any] = {}
        for key in first:
            column = self.columns_of.get(key)
            old = base.get(key)
            if column is not None and column.non_tensor and old is not None:
                full = list(old)  # one value per sub-env
                for i in index:
                    full[i] = parts[i][key]
                data[key] = full
                continue
            if column is None or old is None:
                data[key] = self.columns([p if p is None else {key: p[key]} for p in parts], what)[
                    key
                ]
                continue
            rows = self._join(column, [parts[i][key] for i in index], what, len(index), False)
            full = old.clone() if isinstance(old, torch.Tensor) else old.copy()
            if isinstance(full, torch.Tensor):
                full[torch.as_tensor(index)] = torch.as_tensor(rows, dtype=full.dtype)
            else:
                full[index] = rows
            data[key] = full
        return data

    def _join(
        self,
        column: _Column,
        values: list[Any],
        what: str,
        n: int | None = None,
        missing: bool = True,
    ) -> Any:
        """One array of ``values`` (one per sub-env; ``n`` of them when not every sub-env's;
        ``missing``: some may be ``None``, rows of a sub-env that did not run)."""
        if column.non_tensor:
            return list(values)
        shape, size = column.shape, column.size
        if n is not None and n != self.n:
            shape = (n, *column.row_shape)
            size = int(np.prod(shape)) if size != -1 else -1
        if missing:
            sample = next(v for v in values if v is not None)
            if any(v is None for v in values):
                fill = _zeros_like(sample)
                values = [fill if v is None else v for v in values]
        else:
            sample = values[0]
        if isinstance(sample, torch.Tensor):
            try:
                joined = torch.stack([torch.as_tensor(v) for v in values])
            except (RuntimeError, TypeError):
                self._raise_row(column, values, what)
            return self._fit_tensor(column, joined, values, what, shape, size)
        try:
            joined = np.array(values)  # 3x faster than np.stack; ragged rows raise ValueError
        except ValueError:
            self._raise_row(column, values, what)
        want = column.np_dtype
        have = joined.dtype
        if have.kind == "O":
            self._raise_row(column, values, what)
        if have != want and want is not None:
            if not column.castable(have):
                self._raise_dtype(column, values, what)
            joined = joined.astype(want)
        if joined.shape != shape:
            if joined.size != size:
                self._raise_row(column, values, what)
            joined = joined.reshape(shape)
        return joined

    def _fit_tensor(
        self,
        column: _Column,
        joined: torch.Tensor,
        values: list[Any],
        what: str,
        shape: tuple[int, ...],
        size: int,
    ) -> torch.Tensor:
        if joined.dtype != column.torch_dtype:
            have = numpy_dtype(joined.dtype) if joined.dtype != torch.bfloat16 else None
            if have is None or column.np_dtype is None or not _castable(have, column.np_dtype):
                self._raise_dtype(column, values, what)
            joined = joined.to(column.torch_dtype)
        if joined.shape != shape:
            if joined.numel() != size:
                self._raise_row(column, values, what)
            joined = joined.reshape(shape)
        return joined

    def _raise_unknown(self, key: NestedKey, whose: str) -> None:
        raise SpecMismatchError(
            key,
            "no entry (no spec of the sub-envs declares it)",
            f"an entry of {whose}",
            where=self.owner,
        )

    def _raise_row(self, column: _Column, values: list[Any], what: str) -> None:
        want = int(np.prod(column.row_shape)) if column.row_shape else 1
        for i, value in enumerate(values):
            shape = tuple(np.shape(value))
            size = int(np.prod(shape)) if shape else 1
            if shape != column.row_shape and size != want:
                raise SpecMismatchError(
                    column.key,
                    f"shape {list(column.row_shape)} (the spec of each sub-env)",
                    f"a value of shape {list(shape)}",
                    where=f"{what} output of sub-env {i} of this {self.owner}",
                )
        raise SpecMismatchError(
            column.key,
            f"shape {list(column.row_shape)} (the spec of each sub-env)",
            "values that do not stack into one array",
            where=f"{what} output of this {self.owner}",
        )

    def _raise_dtype(self, column: _Column, values: list[Any], what: str) -> None:
        for i, value in enumerate(values):
            have = np.asarray(value.numpy() if isinstance(value, torch.Tensor) else value).dtype
            if not _castable(have, column.np_dtype):
                raise SpecMismatchError(
                    column.key,
                    column.spec,
                    f"a value of dtype {have} ({_short(value)}), which cannot be stored as "
                    f"{column.torch_dtype} without changing it",
                    where=f"{what} output of sub-env {i} of this {self.owner}",
                )
        raise SpecMismatchError(column.key, column.spec, "values of another dtype", where=what)


def _castable(have: np.dtype, want: np.dtype) -> bool:
    """Integers and bools make flags; otherwise numpy's ``same_kind`` rule."""
    if want == np.bool_:
        return have.kind in "biu"
    return bool(np.can_cast(have, want, casting="same_kind"))


def _zeros_like(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.zeros_like(value)
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    return type(value)(0) if isinstance(value, (bool, int, float, np.generic)) else value


def _short(value: Any) -> str:
    text = repr(value.tolist() if hasattr(value, "tolist") else value)
    return text if len(text) <= 40 else text[:37] + "..."
