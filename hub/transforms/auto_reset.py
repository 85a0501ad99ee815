"""``AutoResetTransform``: use an env that resets itself inside ``step`` like any other env.

Such an env returns, with the ``done`` flag, the first observations of the next episode instead
of the last ones of the episode that ended. The transform keeps those first observations for the
next (partial) reset, which then returns them without resetting the env again, and replaces the
observations returned with ``done`` by placeholders (``replace=True``): NaN for floats, ``-1``
for integers, ``False`` for booleans. Envs that declare ``auto_reset=True`` get the same
treatment from :class:`hub.EnvBase` itself; the transform is for envs that cannot. It marks its
base env as auto-resetting (``auto_reset=True``, without placeholders of its own), so that the
base env's step pipeline steps it on after an episode's end, which it refuses for other envs.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> from hub.envs.builtin import CountingEnv
    >>> from hub.transforms import AutoResetTransform, TransformedEnv
    >>> class SelfResetting(CountingEnv):
    ...     def _step(self, td):
    ...         out = super()._step(td)
    ...         if bool(out["terminated"].any()):
    ...             self.count.zero_()  # the next episode starts right away
    ...             out["observation"] = self.count.clone()
    ...         return out
    >>> env = TransformedEnv(SelfResetting(max_steps=2), AutoResetTransform())
    >>> env.rollout(5, break_when_any_done=False)["next", "observation"].squeeze(-1).tolist()
    [1, -1, 1, -1, 1]
"""

from __future__ import annotations

import torch
from tensordict import TensorDictBase

from hub.envs.done import done_prefixes
from hub.specs import Bounded, Composite, TensorSpec, Unbounded
from hub.transforms._utils import NestedKey, expand_mask, norm_key, spec_leaves
from hub.transforms.transform import Transform

__all__ = ["AutoResetTransform"]


class AutoResetTransform(Transform):
    """See the module docstring. Put it first (innermost) in the chain.

    Args:
        replace: replace the observations returned with ``done`` by placeholders.
        fill_float: the placeholder of float entries (``"nan"`` or a number).
        fill_int: the placeholder of integer entries.
        fill_bool: the placeholder of boolean entries.
    """

    def __init__(
        self,
        replace: bool = True,
        fill_float: float | str = "nan",
        fill_int: int = -1,
        fill_bool: bool = False,
    ) -> None:
        super().__init__()
        self.replace = replace
        self.fill_float = float(fill_float)
        self.fill_int = int(fill_int)
        self.fill_bool = bool(fill_bool)
        self._obs_keys: list[NestedKey] = []
        self._done_keys: list[NestedKey] = []
        self._done_key: NestedKey = "done"
        self._cache: TensorDictBase | None = None

    def _fill(self, dtype: torch.dtype) -> float | int | bool:
        if dtype == torch.bool:
            return self.fill_bool
        if dtype.is_floating_point:
            return self.fill_float
        return self.fill_int

    def _relaxed(self, spec: TensorSpec) -> TensorSpec:
        """The spec widened to hold the placeholder."""
        fill = self._fill(spec.dtype)
        if spec.dtype.is_floating_point:
            if fill != fill or not isinstance(spec, Bounded):  # NaN fits no bound
                return Unbounded(spec.shape, device=spec.device, dtype=spec.dtype)
        if isinstance(spec, Bounded):
            fill_t = torch.tensor(fill, dtype=spec.dtype)
            return Bounded(
                torch.minimum(spec.low, fill_t),
                torch.maximum(spec.high, fill_t),
                shape=spec.shape,
                device=spec.device,
                dtype=spec.dtype,
            )
        return spec

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._mark_base_env()
        obs = output_spec["full_observation_spec"]
        done = output_spec["full_done_spec"]
        self._obs_keys = [key for key, _ in spec_leaves(obs)]
        self._done_keys = [key for key, _ in spec_leaves(done)]
        prefixes = done_prefixes(done)
        self._done_key = norm_key(prefixes[0] + ("done",)) if prefixes else "done"
        if self.replace:
            for key, spec in spec_leaves(obs):
                obs[key] = self._relaxed(spec)
        return output_spec

    def _mark_base_env(self) -> None:
        """Declare the base env auto-resetting (its pipeline then steps it after an episode's
        end); the transform keeps the first observations and writes the placeholders."""
        holder = self.container
        while holder is not None and not hasattr(holder, "base_env"):
            holder = holder.container
        base = getattr(holder, "base_env", None)
        if base is not None and not base.auto_reset:
            base.auto_reset = True
            base.auto_reset_replace = False

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        done = next_tensordict.get(self._done_key)
        if not bool(done.any()):
            return next_tensordict
        self._cache = next_tensordict.select(*self._obs_keys, strict=False).clone()
        if self.replace:
            mask = done.reshape(done.shape[: next_tensordict.batch_dims] + (-1,)).any(-1)
            for key in self._obs_keys:
                value = next_tensordict.get(key, None)
                if not isinstance(value, torch.Tensor):
                    continue
                fill = self._fill(value.dtype)
                next_tensordict.set(key, value.masked_fill(expand_mask(mask, value), fill))
        return next_tensordict

    def _base_reset_override(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        cache = self._cache
        if tensordict is None or cache is None or tensordict.get("_reset", None) is None:
            self._cache = None
            return None
        self._cache = None
        out = cache.copy()
        for key in self._done_keys:
            flag = tensordict.get(key, None)
            if flag is not None:
                out.set(key, torch.zeros_like(flag))
        return out

    def _extra_repr(self) -> str:
        return f"replace={self.replace}"
