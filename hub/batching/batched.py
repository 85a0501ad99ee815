"""``BatchedEnvBase``: what ``SerialEnv`` and ``ParallelEnv`` share.

A batched env runs ``num_envs`` copies of an env as one env of batch size ``[num_envs]`` (plus
the sub-envs' own batch dims). Partial steps (``"_step"``) and partial resets (``"_reset"``)
reach only the sub-envs that need them. Seeded with ``s``, sub-env ``i`` gets ``s + i``.
Attributes the batched env lacks are read from every sub-env (``env.g`` gives one value per
sub-env); ``call``, ``get_attr`` and ``set_attr`` do the same explicitly.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = hub.SerialEnv(2, CountingEnv, [{"max_steps": 3}, {"max_steps": 5}])
    >>> env.max_steps
    [3, 5]
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.envs.base import EnvBase
from hub.errors import BatchingError, HubError
from hub.specs import Bounded, Composite

__all__ = [
    "BatchedEnvBase",
    "normalize_factories",
    "check_num_envs",
    "check_timeout",
    "check_sub_env",
]

EnvFactory = Callable[..., EnvBase]

MAX_ENVS = 4096  # sub-envs of one SerialEnv or ParallelEnv (native batching goes beyond)


def check_num_envs(num_workers: Any, limit: int = MAX_ENVS) -> int:
    """``num_workers`` (a number of sub-envs) as an int between 1 and ``limit``, or a clear
    error (before anything is allocated for it).

    Example:
        >>> check_num_envs(4)
        4
    """
    if isinstance(num_workers, bool):
        index = None
    else:
        try:
            index = operator.index(num_workers)
        except TypeError:
            index = None
    if index is None:
        raise BatchingError(
            f"num_envs must be a whole number of sub-envs, got {num_workers!r} "
            f"({type(num_workers).__name__}); pass an int such as 4."
        )
    if not 1 <= index <= limit:
        raise BatchingError(
            f"num_envs must be between 1 and {limit}, got {index}. A SerialEnv or "
            f"ParallelEnv holds at most {limit} sub-envs (each one a full env object); for "
            "more, use a backend's native batching "
            "(make_env(..., batching='native'), e.g. EnvPool) or several batched envs."
        )
    return index


def check_timeout(name: str, value: Any) -> float | None:
    """``value`` as seconds (``None``: no limit), or a clear error for zero, negative,
    non-finite or non-numeric values.

    Example:
        >>> check_timeout("timeout", 5)
        5.0
    """
    if value is None:
        return None
    numeric = isinstance(value, numbers.Real) and not isinstance(value, bool)
    seconds = float(value) if numeric else math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise BatchingError(
            f"{name} must be a number of seconds greater than 0 (or None for no limit), got "
            f"{value!r}: a call could never complete within it."
        )
    return seconds


def check_sub_env(env: Any, index: int, factory: Any) -> EnvBase:
    """``env`` (what the factory of sub-env ``index`` returned) when it is a hub env, else a
    clear error naming the factory.

    Example:
        >>> from hub.envs.builtin import CountingEnv
        >>> check_sub_env(CountingEnv(), 0, CountingEnv).batch_size
        torch.Size([])
    """
    if isinstance(env, EnvBase):
        return env
    name = getattr(factory, "__qualname__", None) or repr(factory)
    raise BatchingError(
        f"the factory of sub-env {index} ({name}) returned {type(env).__name__}, not a hub env "
        "(an EnvBase): a batched env's create_env_fn must build one hub env, e.g. "
        "lambda: hub.make_env('gymnasium:CartPole-v1'); wrap a foreign env object in its "
        "plugin's wrapper (hub_gym.GymWrapper(env), ...)."
    )


def normalize_factories(
    num_workers: int,
    create_env_fn: EnvFactory | Sequence[EnvFactory],
    create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None,
) -> tuple[list[EnvFactory], list[dict[str, Any]]]:
    """One factory and one kwargs dict per sub-env (a single one is shared by all)."""
    num_workers = check_num_envs(num_workers)
    if callable(create_env_fn):
        fns = [create_env_fn] * num_workers
    else:
        fns = list(create_env_fn)
        if len(fns) != num_workers:
            raise ValueError(
                f"create_env_fn holds {len(fns)} factories for {num_workers} sub-envs: pass "
                "one factory, or one per sub-env."
            )
    if create_env_kwargs is None:
        kwargs = [{} for _ in range(num_workers)]
    elif isinstance(create_env_kwargs, dict):
        kwargs = [dict(create_env_kwargs) for _ in range(num_workers)]
    else:
        kwargs = [dict(k) for k in create_env_kwargs]
        if len(kwargs) != num_workers:
            raise ValueError(
                f"create_env_kwargs holds {len(kwargs)} dicts for {num_workers} sub-envs: pass "
                "one dict, or one per sub-env."
            )
    return fns, kwargs


class BatchedEnvBase(EnvBase):
    """Shared base of the batched envs (see the module docstring).

    Args:
        num_envs: the number of sub-envs.
        create_env_fn: builds one sub-env (or one callable per sub-env).
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one
            per sub-env).
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs (see :class:`hub.EnvBase`).
        spec_locked: lock the specs (see :class:`hub.EnvBase`).

    Attributes:
        num_envs: the number of sub-envs.
    """

    def __init__(
        self,
        num_envs: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        device: Any = None,
        checks: bool = False,
        spec_locked: bool = True,
    ) -> None:
        num_envs = check_num_envs(num_envs)
        self._factories, self._factory_kwargs = normalize_factories(
            num_envs, create_env_fn, create_env_kwargs
        )
        self.num_envs = num_envs
        meta = self._meta_env()
        super().__init__(
            device=device if device is not None else meta.device,
            batch_size=(self._rows_per_step(),) + tuple(meta.batch_size),
            checks=checks,
            spec_locked=spec_locked,
            auto_reset=bool(getattr(meta, "auto_reset", False)),
        )
        self._set_specs_from(meta)
        self._sub_batch = torch.Size(meta.batch_size)

    @property
    def timeout(self) -> float | None:
        """Seconds a call on the sub-envs may take before it raises
        :class:`hub.errors.WorkerTimeoutError` (``None``: no limit)."""
        return self.__dict__.get("_timeout")

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._timeout = check_timeout("timeout", value)

    def _rows_per_step(self) -> int:
        """The rows of the env's batch: every sub-env (a first-ready async env returns fewer)."""
        return self.num_envs

    # ---------------------------------------------------------------- specs
    def _meta_env(self) -> Any:
        """An object whose specs describe one sub-env (the first sub-env)."""
        raise NotImplementedError

    def _worker_specs(self) -> list[Any] | None:
        """The sub-envs whose specs are stacked (``None``: the meta env's, expanded)."""
        return None

    def _set_specs_from(self, meta: Any) -> None:
        n = self.num_envs
        workers = self._worker_specs()
        for name in (
            "full_observation_spec",
            "full_reward_spec",
            "full_done_spec",
            "full_action_spec",
            "full_state_spec",
        ):
            if workers is None:
                spec = getattr(meta, name)
                batched = spec.expand((n,) + tuple(spec.shape))
            else:
                batched = stack_worker_specs([getattr(env, name) for env in workers], name)
            setattr(self, name, batched)

    # ---------------------------------------------------------------- rows
    def _rows(self, mask: Any) -> np.ndarray | None:
        """A row mask of the hooks (any shape starting with ``num_envs``) as one bool per
        sub-env (``None``: all of them)."""
        if mask is None:
            return None
        rows = np.asarray(mask if not isinstance(mask, torch.Tensor) else mask.cpu(), dtype=bool)
        rows = rows.reshape(self.num_envs, -1).any(-1)
        return None if rows.all() else rows

    # ---------------------------------------------------------------- seeding
    def _set_seed(self, seed: int | None) -> None:
        self._seed_envs(seed)

    def _seed_envs(self, seed: int | None) -> None:
        """Seed sub-env ``i`` with ``seed + i`` (times its own batch's count)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- attributes
    def get_attr(self, name: str) -> list[Any]:
        """The attribute ``name`` of every sub-env, in order."""
        raise NotImplementedError

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env (one value each, or one for all)."""
        raise NotImplementedError

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of every sub-env with the same arguments; one result each."""
        raise NotImplementedError

    def call_at(self, indices: Sequence[int], name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of the sub-envs of ``indices`` only (in that order; the
        others are not called); one result each, as SB3's ``env_method(..., indices=...)``.

        Example:
            >>> import hub
            >>> env = hub.make_env("hub:Counting", num_envs=3, batching="serial")
            >>> len(env.call_at([2, 0], "rand_action"))
            2
        """
        chosen = [int(i) for i in indices]
        if sorted(set(chosen)) == list(range(self.num_envs)) and len(chosen) == self.num_envs:
            results = self.call(name, *args, **kwargs)
            return [results[i] for i in chosen]
        raise HubError(
            f"{type(self).__name__} cannot call {name!r} on sub-envs {chosen} alone: it calls "
            "a method on every sub-env. Call it on all of them (env.call), or batch with "
            "batching='serial' or 'parallel'."
        )

    def render_frames(self, tensordict: TensorDictBase | None = None) -> Any:
        """Every sub-env's ``render_frames()``, stacked: ``uint8 [num_workers, ..., H, W, 3]``
        (the sub-envs render from their own state; ``tensordict`` is not sent to them)."""
        import numpy as np

        from hub.errors import NoFramesError
        from hub.media import to_numpy

        try:
            frames = self.call("render_frames")
        except HubError as err:  # NoFramesError, or a WorkerError carrying it
            raise NoFramesError(
                f"the sub-envs of {type(self).__name__} cannot render: {err}"
            ) from err
        return np.stack([to_numpy(frame) for frame in frames])

    def _per_env(self, values: Any) -> list[Any]:
        if isinstance(values, (list, tuple)) and len(values) == self.num_envs:
            return list(values)
        return [values] * self.num_envs

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in _NOT_FORWARDED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        values = self.get_attr(name)
        if values and all(callable(v) for v in values):

            def forward(*args: Any, **kwargs: Any) -> list[Any]:
                return self.call(name, *args, **kwargs)

            forward.__name__ = name
            return forward
        return values

    def _check_num(self, index: int) -> None:
        if not 0 <= index < self.num_envs:
            raise IndexError(f"sub-env index {index} out of range for {self.num_envs} sub-envs.")


# names that must never be looked up on sub-envs (they are set during __init__)
_NOT_FORWARDED = frozenset(
    {"num_envs", "num_workers", "envs_per_worker", "batch_locked", "checks", "auto_reset"}
)


def stack_worker_specs(specs: Sequence[Composite], name: str) -> Composite:
    """One batched spec from the sub-envs' specs (a new leading dim of size ``len(specs)``):
    :func:`join_specs` of each spec with a leading dim of 1."""
    return join_specs([spec.expand((1, *spec.shape)) for spec in specs], name)


def join_specs(
    specs: Sequence[Composite], name: str, *, part: str = "sub-env", whole: str = "a batched env"
) -> Composite:
    """One spec from the specs of several batches of envs (each of batch ``[k_i, ...]``), of
    batch ``[sum k_i, ...]``: what a batched env does with its sub-envs' specs, and what a
    batching plugin does with its workers' batches (hub_ray joins its actors' specs with it).

    Specs equal for every env are expanded; ``Bounded`` leaves whose bounds differ between envs
    are joined with per-env bounds. Anything else that differs (other keys, shapes, dtypes or
    kinds) raises, naming the ``part`` (``"sub-env"``, ``"actor"``) and the ``whole``: the envs
    of one batched env must produce data of one structure.

    Example:
        >>> from hub.specs import Bounded, Composite
        >>> one = Composite(x=Bounded(0, 1, shape=(2, 3)), shape=(2,))
        >>> joined = join_specs([one, one.clone()], "full_observation_spec")
        >>> joined.shape, joined["x"].shape
        (torch.Size([4]), torch.Size([4, 3]))
    """
    total = sum(spec.shape[0] for spec in specs)
    single = specs[0][0]
    out = single.expand((total,) + tuple(single.shape))
    if all(spec == single.expand(tuple(spec.shape)) for spec in specs):
        return out
    out = out.clone()
    out.unlock_()
    keys = list(single.keys(include_nested=True, leaves_only=True))
    for i, spec in enumerate(specs):
        other = list(spec.keys(include_nested=True, leaves_only=True))
        if sorted(map(str, other)) != sorted(map(str, keys)):
            raise HubError(
                f"{part} {i} has other {name} entries than {part} 0 ({other} against {keys}): "
                f"the envs of {whole} must share their specs. Build them from one factory."
            )
    for key in keys:
        leaves = [spec[key] for spec in specs]
        first = leaves[0][0]
        if all(leaf == first.expand(tuple(leaf.shape)) for leaf in leaves):
            continue
        if all(type(leaf) is Bounded and leaf.dtype == first.dtype for leaf in leaves):
            out[key] = Bounded(
                torch.cat([leaf.low for leaf in leaves]),
                torch.cat([leaf.high for leaf in leaves]),
                shape=(total,) + tuple(first.shape),
                dtype=first.dtype,
                device=first.device,
            )
            continue
        bad = next(i for i, leaf in enumerate(leaves) if leaf != first.expand(tuple(leaf.shape)))
        raise HubError(
            f"{part} {bad} has a different {name}[{key!r}] than {part} 0: {leaves[bad]} against "
            f"{leaves[0]}. The envs of {whole} must share their specs (only the bounds of "
            "Bounded specs may differ). Build them from one factory."
        )
    return out
