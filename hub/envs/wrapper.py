"""``EnvWrapper``: the base class for envs that wrap an object of a foreign library.

A subclass builds (or receives) the foreign env in ``_build_env``, derives hub specs from it in
``_make_specs``, and writes ``_reset_arrays`` / ``_step_arrays`` / ``_set_seed`` like any env. Attributes the
wrapper does not have are read from the wrapped env (``wrapper.unwrapped`` reaches gymnasium's).

Example:
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
    ...     def _reset_arrays(self, rows=None, inputs=None, **kwargs):
    ...         return {"temperature": self._env.read()}
    ...     def _step_arrays(self, inputs, rows=None):
    ...         self._env.temperature += float(inputs["action"][0])
    ...         return {"temperature": self._env.read(), "reward": 0.0}
    ...     def _set_seed(self, seed):
    ...         pass
    >>> env = ThermostatEnv(Thermostat())
    >>> env.temperature  # read from the wrapped object
    20.0
"""

from __future__ import annotations

from typing import Any

from hub.envs.base import EnvBase
from hub.envs.contract import Hook, hook

__all__ = ["EnvWrapper", "BASE_KWARGS", "WRAPPER_ATTRIBUTES"]

#: the attribute of EnvWrapper a subclass may read
WRAPPER_ATTRIBUTES = [
    Hook(
        "_env",
        "EnvWrapper",
        "read",
        "set in __init__ from _build_env",
        "the foreign env object (public attributes the wrapper lacks are read from it)",
    )
]

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
        self._specs.complete_defaults()  # so _init_env sees complete specs and their keys
        self._init_env()

    @hook(
        "no",
        "first in __init__, with the keyword arguments that are not EnvBase's",
        "nothing is built yet; raise a clear error for arguments that are off",
    )
    def _check_kwargs(self, kwargs: dict[str, Any]) -> None:
        """Validate the constructor's keyword arguments (raise a clear error when they are off)."""

    @hook(
        "no (returns env)",
        "in __init__, after _check_kwargs, with the same keyword arguments",
        "return the foreign env object; it is stored as self._env",
    )
    def _build_env(self, **kwargs: Any) -> Any:
        """Return the foreign env object (by default, the ``env`` argument itself)."""
        if "env" not in kwargs:
            raise TypeError(f"{type(self).__name__} needs the env to wrap: pass env=...")
        return kwargs["env"]

    @hook(
        "yes",
        "in __init__, with the foreign env, once built",
        "set the specs (observation_spec, action_spec, ...) with the batch dims first "
        "(hub.convert_spec converts foreign spaces)",
    )
    def _make_specs(self, env: Any) -> None:
        """Set the env's specs from the foreign env."""
        raise NotImplementedError(f"{type(self).__name__} must implement _make_specs(env).")

    @hook(
        "no",
        "in __init__, after _make_specs",
        "the specs are complete (default done flags and reward added) and env_keys is known",
    )
    def _init_env(self) -> None:
        """Called once the specs are made and completed (default done flags and reward added,
        keys known): build encoders, seed or warm up the foreign env."""

    def _close(self) -> None:
        """Close the foreign env (``self._env.close()``) when it has a ``close``."""
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
