"""A backend's arrays as the tensors of an env's specs.

The array-level hooks of an env (``_step_arrays``, ``_reset_arrays``) return a flat dict from
leaf keys to arrays: torch tensors, numpy arrays, anything with ``__dlpack__`` (a JAX array), or,
for an entry of one element per env, a Python or numpy scalar. :func:`as_tensor` turns one such
value into the tensor its spec describes, without a copy where the memory can be shared, and
:func:`nest` builds the tensordict of a flat dict whose keys may be nested. :class:`OutputPlan`
does both for one env on every step, planned once from its specs: the common cases (an array
of the spec's dtype and shape, a Python scalar, the done flags of one level) take a few
hundred nanoseconds each.

Example:
    >>> import numpy as np, torch
    >>> from hub.specs import Unbounded
    >>> as_tensor(np.float64(1.5), Unbounded((1,)), torch.Size([1])).tolist()
    [1.5]
    >>> as_tensor(np.ones(2, np.float32), Unbounded((2, 1)), torch.Size([2, 1])).shape
    torch.Size([2, 1])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from tensordict import (
    NonTensorData,
    NonTensorStack,
    TensorDict,
    TensorDictBase,
    is_tensor_collection,
)

from hub.envs._fast_td import new_td
from hub.envs.describe import describe
from hub.envs.done import complete_done_flags
from hub.errors import SpecMismatchError
from hub.specs import Composite, NestedKey, NonTensor, TensorSpec, numpy_dtype

__all__ = ["as_tensor", "value_shape", "nest", "rows_over", "OutputPlan", "Outputs"]


class Outputs(dict):
    """The dict an array-level hook returns, writable as a tensordict is (``out.set(key,
    value)``), so that code written for tensordicts (an info reader) can fill it.

    Example:
        >>> out = Outputs(observation=1)
        >>> out.set("reward", 0.5)["reward"]
        0.5
    """

    def set(self, key: Any, value: Any) -> Outputs:
        """``self[key] = value``; returns ``self``."""
        self[key] = value
        return self


_SCALARS = (bool, int, float, np.generic)


def value_shape(spec: TensorSpec, batch_dims: int, batch: torch.Size) -> torch.Size:
    """The shape of a value of ``spec`` in data of batch size ``batch``, for an env whose own
    batch has ``batch_dims`` dims (a batch-unlocked env may be given more)."""
    return batch + spec.shape[batch_dims:]


def _cast_ok(have: torch.dtype, want: torch.dtype) -> bool:
    """Whether a value of dtype ``have`` may be stored as ``want``: flags from any integer or
    bool, otherwise numpy's ``same_kind`` rule (float64 to float32 yes, float to int no)."""
    if want is torch.bool:
        return not (have.is_floating_point or have.is_complex)
    try:
        have_np = torch.empty(0, dtype=have).numpy().dtype
        want_np = torch.empty(0, dtype=want).numpy().dtype
    except TypeError:  # a dtype numpy lacks (bfloat16): floats to floats only
        return have.is_floating_point == want.is_floating_point
    return bool(np.can_cast(have_np, want_np, casting="same_kind"))


def as_tensor(
    value: Any, spec: TensorSpec, shape: torch.Size, key: NestedKey = "?", where: str = "step"
) -> torch.Tensor:
    """``value`` (an array a backend returned) as a tensor of ``spec``'s dtype and ``shape``.

    numpy arrays and DLPack-capable arrays share their memory where the dtype already matches; a
    value whose number of elements matches but whose shape does not (a reward of shape ``[N]``
    for a spec of ``[N, 1]``) is reshaped; a dtype is cast when no value can change kind
    (float64 to float32, integers to flags), else :class:`~hub.errors.SpecMismatchError`.
    """
    dtype = spec.dtype
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, np.ndarray):
        if not value.flags.writeable or value.dtype.byteorder not in "=|":
            value = np.array(value)
        tensor = torch.from_numpy(value) if value.dtype != np.object_ else None
        if tensor is None:
            raise SpecMismatchError(key, spec, "a numpy array of Python objects", where=where)
    elif isinstance(value, _SCALARS):
        return torch.tensor(value, dtype=dtype, device=spec.device).reshape(shape)
    elif hasattr(value, "__dlpack__"):
        tensor = torch.from_dlpack(value)
    else:
        try:
            tensor = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError) as exc:
            raise SpecMismatchError(key, spec, describe(value), where=where) from exc
    if tensor.dtype != dtype:
        if not _cast_ok(tensor.dtype, dtype):
            raise SpecMismatchError(
                key,
                spec,
                describe(tensor) + f" (a {tensor.dtype} value cannot be stored as {dtype})",
                where=where,
            )
        tensor = tensor.to(dtype)
    if tensor.shape != shape:
        if -1 in spec.shape or tensor.numel() != shape.numel():
            if -1 not in spec.shape:
                raise SpecMismatchError(key, spec, describe(tensor), where=where)
        else:
            tensor = tensor.reshape(shape)
    if spec.device is not None and tensor.device != spec.device:
        tensor = tensor.to(spec.device)
    return tensor


def rows_over(base: Mapping[Any, Any], reset: Mapping[Any, Any], rows: Any) -> dict[Any, Any]:
    """A reset's output for the whole batch: ``reset``'s values in ``rows`` (a bool mask of the
    batch shape), ``base``'s (a step's output) in the other rows, for the entries both hold.

    What the ``_step_reset_arrays`` hook returns as its reset output, from a step output and
    a partial reset whose other rows hold anything.

    Example:
        >>> import numpy as np
        >>> step = {"observation": np.array([[1.0], [2.0]]), "reward": np.ones((2, 1))}
        >>> reset = {"observation": np.array([[0.0], [9.0]])}
        >>> rows_over(step, reset, np.array([True, False]))["observation"].ravel().tolist()
        [0.0, 2.0]
    """
    out = dict(reset)
    for key, new in reset.items():
        old = base.get(key)
        if old is None:
            continue
        if isinstance(new, torch.Tensor) or isinstance(old, torch.Tensor):
            new_t = torch.as_tensor(new)
            old_t = torch.as_tensor(old, device=new_t.device)
            if old_t.shape != new_t.shape and old_t.numel() == new_t.numel():
                old_t = old_t.reshape(new_t.shape)
            if old_t.shape == new_t.shape:
                mask = torch.as_tensor(rows, device=new_t.device).bool()
                mask = mask.reshape(mask.shape + (1,) * (new_t.ndim - mask.ndim))
                out[key] = torch.where(mask, new_t, old_t.to(new_t.dtype))
            continue
        new_a, old_a = np.asarray(new), np.asarray(old)
        if old_a.shape != new_a.shape and old_a.size == new_a.size:
            old_a = old_a.reshape(new_a.shape)
        if old_a.shape == new_a.shape:
            mask = np.asarray(rows, dtype=bool)
            mask = mask.reshape(mask.shape + (1,) * (new_a.ndim - mask.ndim))
            out[key] = np.where(mask, new_a, old_a)
    return out


def nest(
    flat: Mapping[NestedKey, torch.Tensor],
    batch_size: torch.Size,
    levels: Mapping[tuple[str, ...], torch.Size],
    batch_dims: int,
    device: Any,
) -> TensorDictBase:
    """A tensordict from tensors keyed by leaf keys (strings, or tuples for nested entries).

    ``levels`` gives the spec shape of each nested level (its Composite's shape); data with more
    batch dims than the env's ``batch_dims`` keeps its extra leading dims at every level.
    """
    root: dict[str, Any] = {}
    nested: dict[tuple[str, ...], dict[str, Any]] = {}
    for key, value in flat.items():
        if isinstance(key, str) or len(key) == 1:
            root[key if isinstance(key, str) else key[0]] = value
        else:
            nested.setdefault(tuple(key[:-1]), {})[key[-1]] = value
    td = TensorDict(root, batch_size=batch_size, device=device)
    extra = batch_size[: len(batch_size) - batch_dims]
    for prefix in sorted(nested, key=len):
        for depth in range(1, len(prefix)):  # the levels above, if no leaf created them
            if td.get(prefix[:depth], None) is None:
                shape = levels.get(prefix[:depth])
                td.set(prefix[:depth], TensorDict({}, extra + shape if shape else batch_size))
        shape = levels.get(prefix)
        shape = batch_size if shape is None else extra + shape
        sub = td.get(prefix, None)
        if sub is None:
            td.set(prefix, TensorDict(nested[prefix], batch_size=shape, device=device))
        else:
            sub.update(nested[prefix])
    return td


from_numpy = torch.from_numpy
_FLAG_NAMES = ("done", "terminated", "truncated")
# the flags of a one-element done level, copied per step (three small copies cost less than
# one copy split by ``unbind``)
_FLAG = {False: np.zeros((1,), dtype=bool), True: np.ones((1,), dtype=bool)}


class _Leaf:
    """How one output entry becomes a tensor: its spec, and the shapes and dtypes to compare."""

    __slots__ = (
        "key",
        "spec",
        "dtype",
        "np_dtype",
        "shape",
        "shape_tuple",
        "size",
        "one",
        "non_tensor",
        "casts",
    )

    def __init__(self, key: NestedKey, spec: TensorSpec) -> None:
        self.key = key
        self.spec = spec
        self.non_tensor = isinstance(spec, NonTensor)
        self.dtype = spec.dtype
        try:
            self.np_dtype = numpy_dtype(spec.dtype)
        except (TypeError, KeyError):  # bfloat16 and such: the general path
            self.np_dtype = None
        self.shape = spec.shape
        self.shape_tuple = tuple(spec.shape)
        self.size = spec.shape.numel() if -1 not in spec.shape else -1
        self.one = self.np_dtype is not None and spec.shape.numel() == 1 and -1 not in spec.shape
        self.casts: dict[np.dtype, bool] = {}  # numpy dtypes seen: may they be cast to np_dtype

    def from_array(self, value: np.ndarray) -> torch.Tensor | None:
        """A CPU numpy array as this leaf's tensor when only its shape (same size), dtype (a
        cast that keeps the kind, as :func:`as_tensor` allows) or writeability differ;
        ``None`` for anything else (:func:`as_tensor` then explains what is wrong)."""
        want = self.np_dtype
        if want is None or value.size != self.size or value.dtype.byteorder not in "=|":
            return None
        have = value.dtype
        if have != want:
            ok = self.casts.get(have)
            if ok is None:
                ok = self.casts[have] = (
                    have.kind in "biu"
                    if want == np.bool_
                    else have != np.object_ and np.can_cast(have, want, casting="same_kind")
                )
            if not ok:
                return None
            value = value.astype(want)
        elif not value.flags.writeable:
            value = value.copy()
        return from_numpy(value.reshape(self.shape_tuple))


class OutputPlan:
    """Turns the dicts of an env's array-level hooks into its tensordicts, planned once.

    Args:
        output_spec: the env's observation, reward and done specs (one Composite of the three).
        input_spec: its action and state specs (state entries may be returned too).
        batch_size: the env's batch size.
        device: the env's device (``None``: where the arrays are).
        prefixes: the done levels (``()`` for the root).

    Example:
        >>> import hub
        >>> env = hub.make_env("hub:Counting")
        >>> plan = env.env_keys.outputs
        >>> td, ended = plan.build({"observation": 1, "reward": 0.0, "terminated": True})
        >>> td["done"].tolist(), ended
        ([True], True)
    """

    def __init__(
        self,
        output_spec: Composite,
        input_spec: Composite,
        batch_size: torch.Size,
        device: Any,
        prefixes: tuple[tuple[str, ...], ...],
        owner: str = "env",
    ) -> None:
        self.owner = owner  # the env's class name, for errors
        self.batch_size = torch.Size(batch_size)
        self.batch_dims = len(batch_size)
        self.device = None if device is None else torch.device(device)
        self.on_cpu = self.device is None or self.device.type == "cpu"
        self.prefixes = prefixes
        self.leaves: dict[NestedKey, _Leaf] = {}
        self.levels: dict[tuple[str, ...], torch.Size] = {}
        groups = [output_spec[name] for name in ("full_observation_spec", "full_reward_spec")]
        groups += [output_spec["full_done_spec"], input_spec["full_state_spec"]]
        for group in groups:
            for key in group.keys(include_nested=True):
                spec = group[key]
                if isinstance(spec, Composite):
                    self.levels.setdefault(key if isinstance(key, tuple) else (key,), spec.shape)
                elif key not in self.leaves:
                    self.leaves[key] = _Leaf(key, spec)
        self.flat = all(isinstance(key, str) for key in self.leaves)
        done = output_spec["full_done_spec"]
        self.root_flags = () in prefixes and "done" in done.keys()
        self.flag_shape = tuple(done["done"].shape) if self.root_flags else ()
        #: one flag of shape (1,) on the CPU: an unbatched env's flags come as scalars
        self.one_flag = self.flag_shape == (1,) and self.on_cpu
        self.single_level = prefixes == ((),)
        self.done_shapes = {p: done[p + ("done",) if p else "done"].shape for p in prefixes}

    # ------------------------------------------------------------------ one entry
    def tensor(self, key: NestedKey, value: Any, batch: torch.Size | None, where: str) -> Any:
        """``value`` as the tensor of ``key``'s spec (``batch``: the data's batch size when it
        is not the env's own)."""
        leaf = self.leaves.get(key)
        if leaf is None:
            raise SpecMismatchError(
                key,
                "no entry (no spec declares it: declare it in the specs or leave it out)",
                describe(value),
                where=f"{self.owner}.{where}",
            )
        if leaf.non_tensor:
            return _non_tensor(value, self.batch_size if batch is None else batch)
        if batch is None and self.on_cpu:
            kind = type(value)
            if kind is np.ndarray:
                if value.dtype == leaf.np_dtype and value.flags.writeable:
                    if value.shape == leaf.shape_tuple:
                        return from_numpy(value)
                    if value.size == leaf.size:
                        return from_numpy(value.reshape(leaf.shape_tuple))
            elif kind is torch.Tensor:
                if value.dtype is leaf.dtype and value.shape == leaf.shape:
                    return value
            elif leaf.one and (kind is float or kind is int or kind is bool):
                return from_numpy(np.array(value, dtype=leaf.np_dtype).reshape(leaf.shape_tuple))
        shape = leaf.shape if batch is None else batch + leaf.shape[self.batch_dims :]
        tensor = as_tensor(value, leaf.spec, shape, key, f"{self.owner}.{where}")
        if self.device is not None and tensor.device != self.device:
            tensor = tensor.to(self.device)
        return tensor

    # ------------------------------------------------------------------ a whole output
    def build(
        self,
        out: Any,
        batch: torch.Size | None = None,
        where: str = "_step_arrays",
        flags: bool = True,
    ) -> tuple[TensorDictBase, Any]:
        """The tensordict of a hook's output, with every done flag, and what ended.

        Args:
            out: the hook's dict (or a tensordict, taken as it is).
            batch: the data's batch size when it is not the env's (batch-unlocked envs).
            where: names the hook in errors (after the env's class name).
            flags: complete the done flags (``False`` for a reset's output: they are all
                ``False`` and added by the caller).

        Returns:
            ``(tensordict, ended)``: ``ended`` is ``False`` when no episode ended at the root
            level, else ``True`` (unbatched envs) or the bool mask of the rows that ended (a
            tensor of the batch shape). Nested done levels are completed, not reported.
        """
        size = self.batch_size if batch is None else batch
        if not isinstance(out, dict) and isinstance(out, TensorDictBase):
            if flags:
                complete_done_flags(out, list(self.prefixes), self.done_shapes)
            return out, self._ended(out) if flags else False
        data: dict[NestedKey, Any] = {}
        ended: Any = False
        if flags and self.root_flags:
            ended = self._root_flags(out, data, size, where)
        tensor = self.tensor
        if batch is None and self.on_cpu:
            # the common entries inline: an array of the spec's dtype and shape, a scalar
            leaves = self.leaves
            for key, value in out.items():
                if key in data:
                    continue
                leaf = leaves.get(key)
                if leaf is not None:
                    kind = type(value)
                    if kind is np.ndarray:
                        if (
                            value.shape == leaf.shape_tuple
                            and value.dtype == leaf.np_dtype
                            and value.flags.writeable
                        ):
                            data[key] = from_numpy(value)
                            continue
                        fixed = leaf.from_array(value)
                        if fixed is not None:
                            data[key] = fixed
                            continue
                    elif leaf.one and (kind is float or kind is int or kind is bool):
                        scalar = np.array(value, dtype=leaf.np_dtype)
                        data[key] = from_numpy(scalar.reshape(leaf.shape_tuple))
                        continue
                data[key] = tensor(key, value, None, where)
        else:
            for key, value in out.items():
                if key in data:
                    continue
                data[key] = tensor(key, value, batch, where)
        if self.flat:
            td = new_td(data, size, self.device)
        else:
            td = nest(data, size, self.levels, self.batch_dims, self.device)
        if flags and not self.single_level:
            complete_done_flags(td, list(self.prefixes), self.done_shapes)
        return td, ended

    def _root_flags(
        self, out: Any, data: dict[NestedKey, Any], size: torch.Size, where: str
    ) -> Any:
        """Write the root level's three done flags into ``data`` from what ``out`` gave (any of
        them; the others derived), and return what ended."""
        done = out.get("done")
        term = out.get("terminated")
        trunc = out.get("truncated")
        if done is None and type(term) is bool and type(trunc) is bool and self.one_flag:
            # the common case of one env (gymnasium's terminated and truncated), first
            ended = term or trunc
            data["done"] = from_numpy(_FLAG[ended].copy())
            data["terminated"] = from_numpy(_FLAG[term].copy())
            data["truncated"] = from_numpy(_FLAG[trunc].copy())
            return ended
        if done is None and term is None and trunc is None:
            shape = tuple(size) + self.flag_shape[self.batch_dims :]
            data["done"] = from_numpy(np.zeros(shape, dtype=bool))
            data["terminated"] = from_numpy(np.zeros(shape, dtype=bool))
            data["truncated"] = from_numpy(np.zeros(shape, dtype=bool))
            return False
        if self.one_flag and _all_scalars(done, term, trunc):
            te = bool(term) if term is not None else bool(done) and not bool(trunc)
            tr = bool(trunc) if trunc is not None else False
            data["done"] = from_numpy(_FLAG[te or tr].copy())
            data["terminated"] = from_numpy(_FLAG[te].copy())
            data["truncated"] = from_numpy(_FLAG[tr].copy())
            if done is not None and bool(done) != (te or tr):
                raise SpecMismatchError(
                    "done", "terminated | truncated", f"done={bool(done)}", where=self.owner
                )
            return te or tr
        shape = tuple(size) + self.flag_shape[self.batch_dims :]
        if (
            self.on_cpu
            and _bool_tensors(shape, term, trunc)
            and (done is None or _bool_tensors(shape, done))
        ):
            # tensors of the flags' shape (EnvPool's runner, batched envs): kept as they are,
            # as every tensor a hook returns (the hook hands them over)
            dn = term | trunc if done is None else done
            data["done"], data["terminated"], data["truncated"] = dn, term, trunc
            if not dn.any():
                return False
            if not len(size):
                return True
            if len(shape) == len(size):
                return dn
            return dn.squeeze(-1) if len(shape) == len(size) + 1 else dn.reshape(size)
        if self.on_cpu and _all_cpu(done, term, trunc):
            te = None if term is None else _bool_array(term, shape)
            tr = None if trunc is None else _bool_array(trunc, shape)
            dn = None if done is None else _bool_array(done, shape)
            if tr is None:
                tr = np.zeros(shape, dtype=bool)
            if te is None:
                te = dn & ~tr if dn is not None else np.zeros(shape, dtype=bool)
            if dn is None:
                dn = te | tr
            data["done"], data["terminated"], data["truncated"] = (
                from_numpy(dn),
                from_numpy(te),
                from_numpy(tr),
            )
            if not dn.any():
                return False
            if not len(size):
                return True
            return from_numpy(dn.reshape(size) if len(shape) > len(size) else dn)
        return self._root_flags_torch(done, term, trunc, data, size, shape, where)

    def _root_flags_torch(
        self,
        done: Any,
        term: Any,
        trunc: Any,
        data: dict[NestedKey, Any],
        size: torch.Size,
        shape: tuple[int, ...],
        where: str,
    ) -> Any:
        leaf = self.leaves["done"]
        target = torch.Size(shape)

        def flag(value: Any) -> torch.Tensor:
            return as_tensor(value, leaf.spec, target, "done", f"{self.owner}.{where}").to(
                torch.bool
            )

        te = None if term is None else flag(term)
        tr = None if trunc is None else flag(trunc)
        dn = None if done is None else flag(done)
        if tr is None:
            tr = torch.zeros_like(te if te is not None else dn)
        if te is None:
            te = dn & ~tr if dn is not None else torch.zeros_like(tr)
        if dn is None:
            dn = te | tr
        if self.device is not None:
            dn, te, tr = dn.to(self.device), te.to(self.device), tr.to(self.device)
        data["done"], data["terminated"], data["truncated"] = dn, te, tr
        if not bool(dn.any()):
            return False
        return True if not len(size) else dn.reshape(size) if dn.ndim > len(size) else dn

    def raw_ended(self, out: Any, rows: Any = None) -> Any:
        """What ended in a hook's raw output (before :meth:`build`): ``None`` when nothing did,
        ``True`` for an unbatched env, else the bool mask (numpy on the CPU) of the rows, among
        ``rows`` when given.

        Example:
            >>> import hub
            >>> plan = hub.make_env("hub:Counting").env_keys.outputs
            >>> plan.raw_ended({"terminated": False, "truncated": True})
            True
        """
        if not self.root_flags:
            return None
        if not isinstance(out, dict) and isinstance(out, TensorDictBase):
            ended = self._ended(out)
            return None if ended is False else ended
        term, trunc = out.get("terminated"), out.get("truncated")
        if type(term) is bool and type(trunc) is bool and "done" not in out:
            return (
                True
                if (term or trunc) and not self.batch_dims
                else None
                if not (term or trunc)
                else self._all_rows()
            )
        flags = [out.get(name) for name in _FLAG_NAMES]
        if all(f is None or type(f) is bool or isinstance(f, np.generic) for f in flags):
            if not self.batch_dims:
                return True if any(bool(f) for f in flags if f is not None) else None
        size = self.batch_size
        ended = None
        for flag in flags:
            if flag is None:
                continue
            if isinstance(flag, torch.Tensor):
                flag = flag.numpy() if flag.device.type == "cpu" else flag
            value = flag.reshape(size) if hasattr(flag, "reshape") else np.asarray(flag)
            if isinstance(value, torch.Tensor):
                ended = value.bool() if ended is None else ended | value.bool()
            else:
                value = np.asarray(value, dtype=bool).reshape(size)
                ended = value if ended is None else ended | value
        if ended is None:
            return None
        if rows is not None:
            ended = ended & (rows if not isinstance(ended, np.ndarray) else np.asarray(rows))
        if not bool(ended.any()):
            return None
        return True if not self.batch_dims else ended

    def _all_rows(self) -> np.ndarray:
        return np.ones(tuple(self.batch_size), dtype=bool)

    def _ended(self, td: TensorDictBase) -> Any:
        """What ended at the root level of a complete output."""
        if not self.root_flags:
            return False
        done = td.get("done")
        if not bool(done.any()):
            return False
        if not len(td.batch_size):
            return True
        return done.reshape(td.batch_size) if done.ndim > td.batch_dims else done


def _all_scalars(*values: Any) -> bool:
    for value in values:
        if value is None:
            continue
        kind = type(value)
        if kind is bool or kind is np.bool_ or kind is int:
            continue
        if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and not value.ndim):
            continue
        return False
    return True


def _bool_tensors(shape: tuple[int, ...], *values: Any) -> bool:
    """Whether every value is a CPU bool tensor of ``shape``."""
    for value in values:
        if (
            type(value) is not torch.Tensor
            or value.dtype is not torch.bool
            or value.shape != shape
            or not value.is_cpu
        ):
            return False
    return True


def _all_cpu(*values: Any) -> bool:
    for value in values:
        if isinstance(value, torch.Tensor) and value.device.type != "cpu":
            return False
    return True


def _bool_array(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A flag value as a new bool array of ``shape`` (a copy: the flags are written into)."""
    if isinstance(value, torch.Tensor):
        value = value.numpy()
    array = np.array(value, dtype=bool)
    if array.shape != shape:
        array = array.reshape(shape)
    return array


def _non_tensor(value: Any, batch: torch.Size) -> Any:
    """A non-tensor entry's value as tensordict holds it: kept when it is one already, else
    one value for an unbatched env and one per row (a list) for a batched one."""
    if is_tensor_collection(value):
        return value
    if not len(batch):
        return NonTensorData(data=value, batch_size=batch)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        values = value.tolist()  # plain values (str, not numpy's str_), as one env gives them
    elif isinstance(value, (list, tuple, np.ndarray)):
        values = list(value)
    else:
        values = [value] * batch[0]
    return NonTensorStack(*(NonTensorData(data=v, batch_size=batch[1:]) for v in values))
