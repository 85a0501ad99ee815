"""``SubEnvs``: the sub-envs of a hub env, one by one, for the exports' attribute and method
access (gymnasium's ``get_attr`` / ``set_attr`` / ``call``, SB3's ``get_attr`` / ``set_attr`` /
``env_method`` / ``env_is_wrapped`` with their ``indices``).

Where each sub-env is an object of this process (a ``SerialEnv``'s sub-envs, the sub-envs of a
gym/gymnasium ``SyncVectorEnv``, a single env), only the sub-envs named by ``indices`` are
read, set or called. A ``ParallelEnv`` (or another batched env that reaches its sub-envs only
through ``get_attr`` / ``set_attr`` / ``call``) is read and set through those, and calls a
method on some of its sub-envs through its ``call_at``; a batched env without ``call_at``
refuses such a call with a clear error (it would run on all of them).

Attribute reads look through the wrappers of a gym env (``get_wrapper_attr``), as SB3's
``DummyVecEnv`` does; writes set the attribute on the sub-env object itself.

Example:
    >>> import hub
    >>> subs = SubEnvs(hub.make_env("hub:Counting", num_envs=3, batching="serial"))
    >>> subs.set_attr("tag", 7, [2])
    >>> subs.get_attr("max_steps", [0, 1])
    [10, 10]
    >>> subs.get_attr("tag", [2])
    [7]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hub.errors import HubError
from hub.specs import NonTensor

__all__ = ["SubEnvs", "backend_attr", "backend_env", "backend_observation_space"]


def _foreign(env: Any) -> Any:
    """The foreign env a hub ``EnvWrapper`` wraps (its ``_env``), else ``None``."""
    from hub.envs.wrapper import EnvWrapper

    return vars(env).get("_env") if isinstance(env, EnvWrapper) else None


def backend_env(env: Any) -> Any:
    """The backend's env object under a hub env (a gym env for the gym namespaces), looking
    through ``TransformedEnv``s; ``None`` for hub's own envs.

    Example:
        >>> import hub
        >>> backend_env(hub.make_env("hub:Counting")) is None
        True
    """
    while True:
        inner = _foreign(env)
        if inner is not None:
            return inner
        base = getattr(type(env), "base_env", None)
        if not isinstance(base, property):
            return None
        env = env.base_env


def backend_observation_space(env: Any) -> Any:
    """The gymnasium observation space of one sub-env of the backend under the hub env ``env``
    (a vector env's ``single_observation_space``; the first sub-env's of a ``SerialEnv``, or
    of a ``ParallelEnv``, read from its workers), or ``None`` (hub's own envs, gym's spaces).

    Example:
        >>> import hub
        >>> backend_observation_space(hub.make_env("gymnasium:CartPole-v1", num_envs=2)).shape
        (4,)
    """
    gymnasium = sys.modules.get("gymnasium")  # a gymnasium space exists only once it is loaded
    if gymnasium is None:
        return None
    inner = backend_env(env)
    if inner is None and len(getattr(env, "batch_size", ())):
        objects = SubEnvs(env).objects()
        if objects is None and callable(getattr(env, "get_attr_at", None)):
            if not _has_non_tensor(env):  # the space only serves non-tensor entries
                return None
            try:  # sub-envs in other processes (ParallelEnv, RayEnv): the first one's space
                space = env.get_attr_at([0], "observation_space")[0]
            except (AttributeError, HubError):
                return None
            return space if isinstance(space, gymnasium.spaces.Space) else None
        inner = backend_env(objects[0]) if objects else None
    if inner is None:
        return None
    space = getattr(inner, "single_observation_space", None)
    if space is None:
        space = getattr(inner, "observation_space", None)
    return space if isinstance(space, gymnasium.spaces.Space) else None


def _has_non_tensor(env: Any) -> bool:
    spec = env.full_observation_spec
    keys = spec.keys(include_nested=True, leaves_only=True)
    return any(isinstance(spec[k], NonTensor) for k in keys)


def backend_attr(env: Any, name: str) -> Any:
    """The attribute ``name`` of the backend's env under the hub env ``env``: through the hub
    env's own forwarding and the gym wrappers for public names, on the innermost (unwrapped)
    backend env for names starting with ``_`` (``_frameskip``...). Raises ``AttributeError``.

    Example:
        >>> import hub
        >>> backend_attr(hub.make_env("gymnasium:CartPole-v1"), "gravity")
        9.8
    """
    inner = backend_env(env)
    if inner is None or name.startswith("__"):
        raise AttributeError(name)
    if name.startswith("_"):
        return getattr(getattr(inner, "unwrapped", inner), name)
    return _read(inner, name)


def _read(env: Any, name: str) -> Any:
    """``env``'s attribute ``name``, looking through gym wrappers."""
    try:
        return getattr(env, name)
    except AttributeError:
        inner = _foreign(env)
        reader = getattr(inner if inner is not None else env, "get_wrapper_attr", None)
        if reader is None:
            raise
        return reader(name)


def _write(env: Any, name: str, value: Any) -> None:
    """Set ``env``'s attribute ``name``: on the wrapper of a gym env that has it
    (``set_wrapper_attr``, gymnasium >= 1.0), else on the object itself."""
    from hub.envs.base import EnvBase

    writer = None if isinstance(env, EnvBase) else getattr(env, "set_wrapper_attr", None)
    if writer is not None:
        writer(name, value)
    else:
        setattr(env, name, value)


def _is_wrapped(env: Any, wrapper_class: type) -> bool:
    """Whether ``env`` (a gym env, or a hub env that wraps one) has ``wrapper_class`` in its
    chain of wrappers (the ``.env`` links), as SB3's ``env_util.is_wrapped``."""
    current = _foreign(env) if _foreign(env) is not None else env
    while current is not None:
        if isinstance(current, wrapper_class):
            return True
        current = getattr(current, "env", None) if hasattr(current, "unwrapped") else None
    return False


class SubEnvs:
    """Per-sub-env access to a hub env of batch size ``[]`` (one sub-env) or ``[N]``."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.single = tuple(env.batch_size) == ()
        self.num_envs = 1 if self.single else int(env.batch_size[0])

    def objects(self) -> list[Any] | None:
        """The sub-env objects when they live in this process (else ``None``)."""
        return self._objects()

    def _objects(self) -> list[Any] | None:
        """The sub-env objects, when they live in this process."""
        if self.single:
            return [self.env]
        envs = getattr(type(self.env), "envs", None)
        if isinstance(envs, property):  # SerialEnv
            return list(self.env.envs)
        inner = _foreign(self.env)  # a gym/gymnasium vector env
        subs = getattr(inner, "envs", None)
        if isinstance(subs, (list, tuple)) and len(subs) == self.num_envs:
            return list(subs)
        return None

    def indices(self, indices: int | Sequence[int] | None) -> list[int]:
        """``indices`` as a list (``None``: every sub-env)."""
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return [int(i) for i in indices]

    def _batched(self, method: str) -> Any:
        fn = getattr(self.env, method, None)
        if not callable(fn):
            raise HubError(
                f"{type(self.env).__name__} gives no access to its sub-envs ({method} is "
                "missing); hub's SerialEnv and ParallelEnv and the gym namespaces' vector envs do."
            )
        return fn

    def get_attr(self, name: str, indices: int | Sequence[int] | None = None) -> list[Any]:
        """The attribute ``name`` of each sub-env of ``indices``."""
        chosen = self.indices(indices)
        objects = self._objects()
        if objects is not None:
            return [_read(objects[i], name) for i in chosen]
        get_attr_at = getattr(self.env, "get_attr_at", None)  # ParallelEnv, RayEnv
        if callable(get_attr_at) and chosen != list(range(self.num_envs)):
            return list(get_attr_at(chosen, name))
        values = list(self._batched("get_attr")(name))
        return [values[i] for i in chosen]

    def set_attr(self, name: str, value: Any, indices: int | Sequence[int] | None = None) -> None:
        """Set the attribute ``name`` to ``value`` on each sub-env of ``indices``."""
        self.set_each(name, [value] * len(self.indices(indices)), indices)

    def set_each(
        self, name: str, values: Sequence[Any], indices: int | Sequence[int] | None = None
    ) -> None:
        """Set the attribute ``name`` of the sub-envs of ``indices``, one value each."""
        chosen = self.indices(indices)
        if len(values) != len(chosen):
            raise ValueError(
                f"set_attr({name!r}) got {len(values)} values for {len(chosen)} sub-envs."
            )
        objects = self._objects()
        if objects is not None:
            for i, value in zip(chosen, values):
                _write(objects[i], name, value)
            return
        set_attr_at = getattr(self.env, "set_attr_at", None)  # ParallelEnv, RayEnv
        if callable(set_attr_at) and sorted(chosen) != list(range(self.num_envs)):
            set_attr_at(chosen, name, list(values))
            return
        if sorted(chosen) == list(range(self.num_envs)):
            per_env = [None] * self.num_envs
            for i, value in zip(chosen, values):
                per_env[i] = value
            self._batched("set_attr")(name, per_env)
            return
        try:
            current = list(self._batched("get_attr")(name))
        except AttributeError as exc:
            raise HubError(
                f"set_attr({name!r}) on sub-envs {chosen} of {type(self.env).__name__}: its "
                "sub-envs run elsewhere and are set all at once, so the others keep their value, "
                f"and they have none ({exc}). Set it on every sub-env (indices=None)."
            ) from exc
        for i, value in zip(chosen, values):
            current[i] = value
        self._batched("set_attr")(name, current)

    def call(
        self,
        name: str,
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
        indices: int | Sequence[int] | None = None,
    ) -> list[Any]:
        """Call the method ``name`` of each sub-env of ``indices``; one result each (a
        non-callable attribute gives its value, as gymnasium's ``call``)."""
        kwargs = kwargs or {}
        chosen = self.indices(indices)
        objects = self._objects()
        if objects is not None:
            results = []
            for i in chosen:
                member = _read(objects[i], name)
                results.append(member(*args, **kwargs) if callable(member) else member)
            return results
        call_at = getattr(self.env, "call_at", None)
        if callable(call_at) and sorted(chosen) != list(range(self.num_envs)):
            return list(call_at(chosen, name, *args, **kwargs))
        if sorted(chosen) != list(range(self.num_envs)):
            raise HubError(
                f"calling {name!r} on sub-envs {chosen} only: {type(self.env).__name__} runs its "
                "sub-envs elsewhere and calls a method on all of them. Call it on every sub-env "
                "(indices=None), or batch with batching='serial' for per-sub-env calls."
            )
        results = list(self._batched("call")(name, *args, **kwargs))
        return [results[i] for i in chosen]

    def is_wrapped(
        self, wrapper_class: type, indices: int | Sequence[int] | None = None
    ) -> list[bool]:
        """Whether each sub-env of ``indices`` is wrapped in ``wrapper_class`` (a gym wrapper)."""
        chosen = self.indices(indices)
        objects = self._objects()
        if objects is None:
            return [False for _ in chosen]
        return [_is_wrapped(objects[i], wrapper_class) for i in chosen]
