"""Normalisation: ``ObservationNorm`` (fixed affine map, stats from ``init_stats``) and
``VecNorm`` (running statistics).

Example:
    >>> import hub
    >>> from hub.transforms import ObservationNorm, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting", max_steps=4), ObservationNorm())
    >>> env.transform.init_stats(8)
    >>> obs = env.rollout(4)["next", "observation"].squeeze(-1)
    >>> [round(x, 2) for x in obs.tolist()]
    [-1.25, -0.42, 0.42, 1.25]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import torch
from tensordict import TensorDictBase

from hub.errors import HubError
from hub.specs import Bounded, Composite, TensorSpec, Unbounded
from hub.transforms._utils import NestedKey, spec_leaves
from hub.transforms.transform import Transform

__all__ = ["ObservationNorm", "VecNorm"]


def _float_dtype(spec: TensorSpec) -> torch.dtype:
    return spec.dtype if spec.dtype.is_floating_point else torch.get_default_dtype()


class ObservationNorm(Transform):
    """An affine map of observations: ``obs * scale + loc``, or ``(obs - loc) / scale`` with
    ``standard_normal=True``.

    Args:
        loc, scale: the map's parameters (tensors broadcast to the entry's shape); leave them out
            and call :meth:`init_stats` to compute them from rollouts of the env.
        in_keys: the entries to normalise (default ``["observation"]``).
        out_keys: where the results go (default: ``in_keys``).
        in_keys_inv, out_keys_inv: entries (actions) mapped back on the way in.
        standard_normal: the meaning of ``loc``/``scale`` (see above).
        eps: the smallest scale ``init_stats`` sets.

    Example:
        >>> import torch
        >>> import hub
        >>> from hub.transforms import ObservationNorm, TransformedEnv
        >>> norm = ObservationNorm(loc=torch.tensor(1.0), scale=torch.tensor(2.0),
        ...                        in_keys=["observation"], standard_normal=True)
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), norm)
        >>> env.rollout(3)["next", "observation"].squeeze(-1).tolist()
        [0.0, 0.5, 1.0]
    """

    def __init__(
        self,
        loc: float | torch.Tensor | None = None,
        scale: float | torch.Tensor | None = None,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        standard_normal: bool = False,
        eps: float = 1e-6,
    ) -> None:
        if in_keys is None:
            in_keys = ["observation"]
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        self.loc = None if loc is None else torch.as_tensor(loc, dtype=torch.get_default_dtype())
        self.scale = (
            None if scale is None else torch.as_tensor(scale, dtype=torch.get_default_dtype())
        )
        self.standard_normal = standard_normal
        self.eps = eps

    @property
    def initialized(self) -> bool:
        """Whether ``loc`` and ``scale`` are set."""
        return self.loc is not None and self.scale is not None

    def _params(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.loc is None or self.scale is None:
            raise HubError(
                "ObservationNorm has no loc/scale yet: pass them to the constructor or call "
                "transform.init_stats(num_iter) once the transform is in an env."
            )
        return self.loc, self.scale

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        loc, scale = self._params()
        if self.standard_normal:
            return (value - loc) / scale
        return value * scale + loc

    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        loc, scale = self._params()
        if self.standard_normal:
            return value * scale + loc
        return (value - loc) / scale

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        dtype = _float_dtype(spec)
        if isinstance(spec, Bounded) and self.initialized:
            a = self._apply_transform(spec.low.to(dtype)).to(dtype)
            b = self._apply_transform(spec.high.to(dtype)).to(dtype)
            low, high = torch.minimum(a, b), torch.maximum(a, b)
            return Bounded(low, high, shape=spec.shape, device=spec.device, dtype=dtype)
        return Unbounded(spec.shape, device=spec.device, dtype=dtype)

    _transform_inv_spec = _transform_spec

    def init_stats(
        self,
        num_iter: int,
        reduce_dim: int | Sequence[int] | None = None,
        key: NestedKey | None = None,
    ) -> None:
        """Set ``loc``/``scale`` so that the entry has mean 0 and std 1 over ``num_iter`` steps
        of the env up to this transform (its :attr:`parent`).

        Args:
            num_iter: the number of steps to collect (episodes are restarted as needed).
            reduce_dim: the dims to average over (default: every dim but the entry's own).
            key: the entry to measure (default: the first of ``in_keys``).
        """
        parent = self.parent
        if parent is None:
            raise HubError(
                "ObservationNorm.init_stats rolls out the env the transform belongs to; add the "
                "transform to a TransformedEnv first."
            )
        if num_iter < 2:
            raise ValueError(f"init_stats needs num_iter >= 2 to estimate a std, got {num_iter}.")
        key = key if key is not None else self._in_keys[0]
        data = parent.rollout(num_iter, break_when_any_done=False)
        value = data.get(("next",) + ((key,) if isinstance(key, str) else key)).double()
        spec = parent.full_observation_spec[key]
        event_ndim = spec.ndim - len(parent.batch_size)
        if reduce_dim is None:
            dims = tuple(range(value.ndim - event_ndim))
        else:
            dims = (reduce_dim,) if isinstance(reduce_dim, int) else tuple(reduce_dim)
        mean = value.mean(dims)
        std = value.std(dims).clamp_min(self.eps)
        dtype = _float_dtype(spec)
        if self.standard_normal:
            self.loc, self.scale = mean.to(dtype), std.to(dtype)
        else:
            self.scale = (1 / std).to(dtype)
            self.loc = (-mean / std).to(dtype)
        self._changed()

    def _extra_repr(self) -> str:
        state = "initialized" if self.initialized else "not initialized"
        return f"{super()._extra_repr()}, {state}, standard_normal={self.standard_normal}"


class VecNorm(Transform):
    """Normalise entries with running estimates of their mean and variance.

    The estimates are exponential moving sums (``decay`` per update) updated with every output
    (step and reset) until :meth:`freeze`; the output is ``(value - mean) / sqrt(var + eps)``.

    Args:
        in_keys: the entries to normalise (default ``["observation"]``).
        out_keys: where the results go (default: ``in_keys``).
        decay: the weight of past data in the running sums.
        eps: added to the variance.

    Example:
        >>> import hub
        >>> from hub.transforms import TransformedEnv, VecNorm
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), VecNorm(decay=0.99))
        >>> data = env.rollout(100)
        >>> sorted(env.transform.state_dict())
        ['observation']
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        decay: float = 0.9999,
        eps: float = 1e-4,
    ) -> None:
        if in_keys is None:
            in_keys = ["observation"]
        super().__init__(in_keys, out_keys)
        if not 0 < decay <= 1:
            raise ValueError(f"decay must be in (0, 1], got {decay}.")
        self.decay = decay
        self.eps = eps
        self.frozen = False
        self._stats: dict[NestedKey, dict[str, torch.Tensor]] = {}
        self._event_ndim: dict[NestedKey, int] = {}

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        batch_ndim = len(observation_spec.shape)
        for key, spec in spec_leaves(observation_spec):
            if key in self._in_keys:
                self._event_ndim[key] = spec.ndim - batch_ndim
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            if in_key in observation_spec:
                spec = observation_spec[in_key]
                observation_spec[out_key] = Unbounded(
                    spec.shape, device=spec.device, dtype=_float_dtype(spec)
                )
        return observation_spec

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            value = tensordict.get(in_key, None)
            if value is None:
                if strict and not self.missing_tolerance:
                    raise KeyError(f"VecNorm reads {in_key!r}, which is not in the data.")
                continue
            tensordict.set(out_key, self._normalize(in_key, value))
        return tensordict

    def _normalize(self, key: NestedKey, value: torch.Tensor) -> torch.Tensor:
        event_ndim = self._event_ndim.get(key, 1)
        dims = tuple(range(value.ndim - event_ndim))
        x = value.to(torch.float64)
        stats = self._stats.get(key)
        if stats is None:
            zeros = torch.zeros(value.shape[value.ndim - event_ndim :], dtype=torch.float64)
            stats = self._stats[key] = {
                "sum": zeros.clone(),
                "ssq": zeros.clone(),
                "count": torch.zeros((), dtype=torch.float64),
            }
        if not self.frozen:
            n = float(math.prod(value.shape[: len(dims)]))
            d = self.decay
            stats["sum"].mul_(d).add_(x.sum(dims) if dims else x)
            stats["ssq"].mul_(d).add_((x * x).sum(dims) if dims else x * x)
            stats["count"].mul_(d).add_(n)
        mean, var = self._moments(stats)
        out = (x - mean) / (var + self.eps).sqrt()
        return out.to(value.dtype if value.is_floating_point() else torch.get_default_dtype())

    @staticmethod
    def _moments(stats: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        count = stats["count"].clamp_min(1e-12)
        mean = stats["sum"] / count
        var = (stats["ssq"] / count - mean * mean).clamp_min(0)
        return mean, var

    def freeze(self) -> VecNorm:
        """Stop updating the statistics (for evaluation)."""
        self.frozen = True
        return self

    def unfreeze(self) -> VecNorm:
        """Update the statistics again."""
        self.frozen = False
        return self

    def state_dict(self) -> dict[NestedKey, dict[str, torch.Tensor]]:
        """The running sums of each entry (copies)."""
        return {k: {n: t.clone() for n, t in v.items()} for k, v in self._stats.items()}

    def load_state_dict(self, state: dict[NestedKey, dict[str, torch.Tensor]]) -> None:
        """Restore running sums saved with :meth:`state_dict`."""
        self._stats = {k: {n: t.clone() for n, t in v.items()} for k, v in state.items()}

    def to_observation_norm(self) -> ObservationNorm:
        """A fixed :class:`ObservationNorm` with the current estimates (one key at a time)."""
        if len(self._in_keys) != 1 or self._in_keys[0] not in self._stats:
            raise HubError("to_observation_norm needs one in_key with statistics collected.")
        mean, var = self._moments(self._stats[self._in_keys[0]])
        return ObservationNorm(
            loc=mean.float(),
            scale=(var + self.eps).sqrt().float(),
            in_keys=self._in_keys,
            out_keys=self._out_keys,
            standard_normal=True,
        )

    def _extra_repr(self) -> str:
        return f"{super()._extra_repr()}, decay={self.decay}, frozen={self.frozen}"
