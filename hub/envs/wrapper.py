"""``EnvWrapper``: the base class for envs that wrap an object of a foreign library.

A subclass builds (or receives) the foreign env in ``_build_env``, derives hub specs from it in
``_make_specs``, and writes ``_reset`` / ``_step`` / ``_set_seed`` like any env. Attributes the
wrapper does not have are read from the wrapped env (``wrapper.unwrapped`` reaches gymnasium's).

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> from hub import EnvWrapper
    >>> from hub.specs import Composite, Unbounded
    >>> class Thermostat:  # a foreign env with its own API
    ...     temperature = 20.0
    ...     def read(self):
    ...         return self.temperature
    >>> class ThermostatEnv(EnvWrapper):
    ...     def _build_env(self, env):
    ...         return env
    ...     def _make_specs(self, env):
    ...         self.observation_spec = Composite(temperature=Unbounded((1,)))
    ...         self.action_spec = Unbounded((1,))
    ...     def _reset(self, tensordict):
    ...         return TensorDict({"temperature": torch.tensor([self._env.read()])}, [])
    ...     def _step(self, tensordict):
    ...         self._env.temperature += float(tensordict["action"])
    ...         return TensorDict({"temperature": torch.tensor([self._env.read()]),
    ...                            "reward": torch.zeros(1)}, [])
    ...     def _set_seed(self, seed):
    ...         pass
    >>> env = ThermostatEnv(Thermostat())
    >>> env.temperature  # read from the wrapped object
    20.0
"""

from __future__ import annotations

from typing import Any

from hub.envs.base import EnvBase

__all__ = ["EnvWrapper", "BASE_KWARGS"]

#: the keyword arguments of ``EnvBase.__init__``: a wrapper passes these to ``EnvBase`` and
#: the others to ``_check_kwargs`` and ``_build_env``
BASE_KWARGS = (
    "device",
    "batch_size",
    "checks",
    "spec_locked",
    "auto_reset",
    "auto_reset_replace",
    "allow_done_after_reset",
)


class EnvWrapper(EnvBase):
    """Base class for wrappers of foreign env objects.

    Args:
        env: the foreign env object (positional or ``env=``), for wrappers of existing objects.
            Env classes that build the object from a name (``GymEnv("CartPole-v1")``) take their
            own arguments and pass them on as keyword arguments.
        **kwargs: the :class:`~hub.EnvBase` arguments (``device``, ``batch_size``, ``checks``,
            ...); everything else goes to ``_check_kwargs`` and ``_build_env``.
    """

    def __init__(self, env: Any = None, **kwargs: Any) -> None:
        base = {k: kwargs.pop(k) for k in BASE_KWARGS if k in kwargs}
        super().__init__(**base)
        if env is not None:
            kwargs["env"] = env
        self._constructor_kwargs = dict(kwargs)
        self._check_kwargs(kwargs)
        self._env = self._build_env(**kwargs)
        self._make_specs(self._env)
        self._ensure_default_specs()  # so _init_env sees complete specs and their keys
        self._compute_keys()
        self._init_env()

    def _check_kwargs(self, kwargs: dict[str, Any]) -> None:
        """Validate the constructor's keyword arguments (raise a clear error when they are off)."""

    def _build_env(self, **kwargs: Any) -> Any:
        """Return the foreign env object (by default, the ``env`` argument itself)."""
        if "env" not in kwargs:
            raise TypeError(f"{type(self).__name__} needs the env to wrap: pass env=...")
        return kwargs["env"]

    def _make_specs(self, env: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _make_specs(env).")

    def _init_env(self) -> None:
        """Called once the specs are made and completed (default done flags and reward added,
        keys known): build encoders, seed or warm up the foreign env."""

    def _close(self) -> None:
        close = getattr(self.__dict__.get("_env"), "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> Any:
        # only called for names the wrapper lacks: forward public ones to the wrapped env
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        env = self.__dict__.get("_env")
        if env is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            return getattr(env, name)
        except AttributeError:
            raise AttributeError(
                f"neither {type(self).__name__} nor the env it wraps ({type(env).__name__}) has "
                f"an attribute {name!r}"
            ) from None
