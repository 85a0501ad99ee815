"""``to_torchrl``: any hub env (batched too) as a TorchRL ``EnvBase``.

hub's env contract is TorchRL's (the same keys, ``"next"``, ``"_reset"`` and ``"_step"``
semantics, the same spec classes), so the adapter converts the specs once and forwards
``_reset``, ``_step`` and ``_set_seed``. The result passes TorchRL's ``check_env_specs``, runs in
its collectors (``Collector``, ``MultiSyncCollector``...) and takes its transforms. TorchRL is
imported only when :func:`to_torchrl` is called (install with ``pip install "hub[torchrl]"``
and the constraints of ``constraints/torchrl.txt``: TorchRL 0.14 needs tensordict 0.14).

``hub.make_env(uri, ..., torchrl=True)`` builds the hub env and returns it through this.

Closing follows TorchRL's rule, not hub's: ``close()`` closes the hub env (its workers, pools
and windows go), and the TorchRL env may still be used: its next ``reset`` (or ``step``,
``rollout``, ``set_seed``) builds a new hub env first, as TorchRL's batched envs restart their
workers. So TorchRL's pattern works: its ``Collector`` closes the env at ``total_frames`` and
the tutorial then evaluates on the same env. The new hub env comes from the factory that
:func:`hub.make_env` recorded (:mod:`hub.export.reopen`), or from ``to_torchrl(env,
reopen=fn)``; it is seeded, when the closed one was, with the seed its ``set_seed`` named for
the next env. Without a factory (an env built by hand), use after ``close()`` raises
``ClosedEnvError`` saying so.

Example:
    >>> import hub
    >>> env = hub.to_torchrl(hub.make_env("hub:Pendulum"))  # doctest: +SKIP
    >>> env.rollout(3).batch_size  # doctest: +SKIP
    torch.Size([3])
"""

from __future__ import annotations

import importlib
from typing import Any

from hub.errors import ClosedEnvError, HubError, MissingDependencyError
from hub.export.reopen import Factory, factory_of
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    NonTensor,
    OneHot,
    TensorSpec,
    Unbounded,
)

__all__ = ["to_torchrl", "spec_to_torchrl"]


def _torchrl_data() -> Any:
    try:
        return importlib.import_module("torchrl.data")
    except ImportError as exc:
        raise MissingDependencyError(
            "torchrl",
            extra="torchrl",
            message=(
                'to_torchrl needs TorchRL: pip install -c constraints/torchrl.txt "hub[torchrl]" '
                f"(TorchRL 0.14 needs tensordict 0.14). The import failed with: {exc}"
            ),
        ) from None


def spec_to_torchrl(spec: TensorSpec) -> Any:
    """The TorchRL spec of a hub spec (same class names, shapes, dtypes and bounds).

    Example:
        >>> from hub.specs import Bounded
        >>> spec_to_torchrl(Bounded(-1.0, 1.0, shape=(2,))).shape  # doctest: +SKIP
        torch.Size([2])
    """
    data = _torchrl_data()
    shape, device = tuple(spec.shape), spec.device
    if isinstance(spec, Composite):
        leaves = {key: spec_to_torchrl(value) for key, value in spec.items()}
        return data.Composite(leaves, shape=shape, device=device)
    if isinstance(spec, Bounded):
        return data.Bounded(
            low=spec.low.clone(),
            high=spec.high.clone(),
            shape=shape,
            dtype=spec.dtype,
            device=device,
        )
    if isinstance(spec, Unbounded):
        return data.Unbounded(shape=shape, dtype=spec.dtype, device=device)
    if isinstance(spec, OneHot):
        return data.OneHot(spec.n, shape=shape, dtype=spec.dtype, device=device)
    if isinstance(spec, MultiOneHot):
        return data.MultiOneHot(spec.nvec.clone(), shape=shape, dtype=spec.dtype, device=device)
    if isinstance(spec, MultiCategorical):
        return data.MultiCategorical(
            spec.nvec.clone(), shape=shape, dtype=spec.dtype, device=device
        )
    if isinstance(spec, Binary):
        return data.Binary(spec.n, shape=shape, dtype=spec.dtype, device=device)
    if isinstance(spec, Categorical):
        return data.Categorical(spec.n, shape=shape, dtype=spec.dtype, device=device)
    if isinstance(spec, NonTensor):
        return data.NonTensor(shape=shape, device=device)
    raise HubError(f"hub cannot give a {type(spec).__name__} spec to TorchRL.")


def to_torchrl(env: Any, *, reopen: Factory | None = None) -> Any:
    """Wrap the hub env ``env`` as a ``torchrl.envs.EnvBase`` (see the module docs).

    Args:
        env: any hub env (batch size ``[]`` or batched).
        reopen: a function of no argument that builds a hub env like ``env``, used when the
            TorchRL env is used after ``close()``; by default the one :func:`hub.make_env`
            recorded for ``env``.

    Returns:
        a TorchRL env with the same batch size, device and specs, whose ``hub_env`` is ``env``.
    """
    _torchrl_data()
    return _env_class()(env, reopen if reopen is not None else factory_of(env))


_CLASS: Any = None


def _env_class() -> Any:
    global _CLASS
    if _CLASS is None:
        _CLASS = _define(importlib.import_module("torchrl.envs").EnvBase)
    return _CLASS


def _define(base: type) -> type:
    class HubTorchRLEnv(base):  # type: ignore[misc, valid-type]
        """A TorchRL env that runs a hub env (made by :func:`hub.to_torchrl`)."""

        def __init__(self, env: Any, reopen: Factory | None = None) -> None:
            super().__init__(device=env.device, batch_size=env.batch_size)
            self.hub_env = env
            self._reopen = reopen
            self._seed: int | None = None
            self.full_observation_spec = spec_to_torchrl(env.full_observation_spec)
            self.full_action_spec = spec_to_torchrl(env.full_action_spec)
            self.full_reward_spec = spec_to_torchrl(env.full_reward_spec)
            self.full_done_spec = spec_to_torchrl(env.full_done_spec)
            state = env.full_state_spec
            if len(list(state.keys())):
                self.full_state_spec = spec_to_torchrl(state)
            self.is_closed = False

        @property
        def batch_locked(self) -> bool:
            return bool(self.hub_env.batch_locked)

        @batch_locked.setter
        def batch_locked(self, value: bool) -> None:
            if bool(value) != bool(self.hub_env.batch_locked):
                raise HubError("batch_locked comes from the hub env and cannot be changed.")

        def _live(self) -> Any:
            """The hub env, built again when it was closed (TorchRL's rule)."""
            env = self.hub_env
            if not env.is_closed:
                return env
            if self._reopen is None:
                raise ClosedEnvError(
                    f"this TorchRL env was closed and its hub env ({type(env).__name__}) cannot "
                    "be built again: it was not made by hub.make_env. Pass a factory, "
                    "hub.to_torchrl(env, reopen=lambda: <build the env>), or build a new env."
                )
            fresh = self._reopen()
            if self._seed is not None:
                fresh.set_seed(fresh.set_seed(self._seed))  # the seed named for the next env
            self.hub_env = fresh
            self.is_closed = False
            return fresh

        def _reset(self, tensordict: Any = None, **kwargs: Any) -> Any:
            # a shallow copy: hub's reset drops the "_reset" entries of its input, and TorchRL
            # reads them after this call
            given = None if tensordict is None else tensordict.copy()
            return self._live().reset(given, **kwargs)

        def _step(self, tensordict: Any) -> Any:
            return self._live().step(tensordict.copy()).get("next")

        def _set_seed(self, seed: int | None) -> None:
            self._seed = seed
            self._live().set_seed(seed)

        def close(self, *, raise_if_closed: bool = True) -> None:
            self.hub_env.close()
            try:
                super().close(raise_if_closed=raise_if_closed)
            except TypeError:  # TorchRL versions whose close takes no argument
                super().close()

        def __repr__(self) -> str:
            return f"HubTorchRLEnv({self.hub_env!r}, batch_size={list(self.batch_size)})"

    return HubTorchRLEnv
