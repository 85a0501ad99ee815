"""Checks of one env of a plugin, through ``hub.make_env`` as a user builds it.

Each function takes a full URI (``"example:Chain-v0"``) and the keyword arguments to pass to
``make_env``, and raises :class:`~hub.testing.errors.ConformanceError` saying what broke:

* :func:`check_specs`: ``make`` returns a ``hub.EnvBase`` whose rollouts match its specs
  (``hub.check_env_specs``);
* :func:`check_seeding`: two envs seeded alike give the same rollout (random actions drawn
  after ``torch.manual_seed``);
* :func:`check_batching`: two copies batched ``"serial"``, ``"parallel"`` (worker processes) or
  ``"native"`` have batch size ``[2]`` and match their specs; ``"parallel"`` gives the data
  ``"serial"`` gives;
* :func:`check_partial_reset`: a reset with ``"_reset"`` set for one of two sub-envs resets it
  and leaves the other's data as it was;
* :func:`check_close`: ``close()`` is idempotent and a closed env refuses to step;
* :func:`check_factory_pickles`: the factory batched envs send to worker processes pickles
  and builds an env with the same specs;
* :func:`check_internal_names`: the env's own classes override no internal underscore name of
  hub's env classes (only the documented subclass hooks), so no clash silently replaces hub's
  machinery.

Example:
    >>> from hub.testing.env_checks import check_seeding
    >>> check_seeding("hub:Pendulum")
"""

from __future__ import annotations

import functools
import pickle
from typing import Any

import torch

import hub
from hub.testing.errors import ConformanceError

__all__ = [
    "ENV_CHECKS",
    "check_specs",
    "check_seeding",
    "check_batching",
    "check_partial_reset",
    "check_close",
    "check_factory_pickles",
    "check_internal_names",
    "same_data",
]

STEPS = 8


def _make(uri: str, check: str, **kwargs: Any) -> hub.EnvBase:
    try:
        env = hub.make_env(uri, **kwargs)
    except Exception as exc:
        raise ConformanceError(
            f"{uri} [{check}]: make_env({uri!r}, {_kwargs_text(kwargs)}) raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(env, hub.EnvBase):
        raise ConformanceError(
            f"{uri} [{check}]: the namespace's make() returned {type(env).__name__}, not a "
            f"hub.EnvBase. make(env_id, **kwargs) must build and return the env."
        )
    return env


def _kwargs_text(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _rollout(env: hub.EnvBase, seed: int, steps: int) -> Any:
    env.set_seed(seed)
    torch.manual_seed(seed)  # random actions come from torch's global generator
    return env.rollout(steps, break_when_any_done=False)


def same_data(a: Any, b: Any) -> str | None:
    """``None`` if the two tensordicts hold the same keys and values (NaN equal to NaN), else
    the first key that differs.

    Example:
        >>> from tensordict import TensorDict
        >>> td = TensorDict({"x": torch.tensor([1.0, float("nan")])}, [])
        >>> same_data(td, td.clone()) is None
        True
    """
    keys_a = set(a.keys(include_nested=True, leaves_only=True))
    keys_b = set(b.keys(include_nested=True, leaves_only=True))
    if keys_a != keys_b:
        return f"keys {sorted(map(str, keys_a ^ keys_b))} are in one and not the other"
    for key in sorted(keys_a, key=str):
        x, y = a.get(key), b.get(key)
        if not isinstance(x, torch.Tensor):
            if x != y:
                return str(key)
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return str(key)
        if x.is_floating_point():
            if not bool(((x == y) | (x.isnan() & y.isnan())).all()):
                return str(key)
        elif not torch.equal(x, y):
            return str(key)
    return None


def check_specs(uri: str, steps: int = STEPS, **kwargs: Any) -> None:
    """``make`` returns an ``EnvBase`` whose data matches its specs over ``steps`` steps."""
    env = _make(uri, "specs", **kwargs)
    try:
        hub.check_env_specs(env, n_steps=steps, seed=0)
    except Exception as exc:
        raise ConformanceError(
            f"{uri} [specs]: check_env_specs failed: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        env.close()


def check_seeding(uri: str, seed: int = 0, steps: int = STEPS, **kwargs: Any) -> None:
    """Two envs seeded with ``seed`` give the same rollout of random actions."""
    first = _make(uri, "seeding", **kwargs)
    second = _make(uri, "seeding", **kwargs)
    try:
        a = _rollout(first, seed, steps)
        b = _rollout(second, seed, steps)
    finally:
        first.close()
        second.close()
    key = same_data(a, b)
    if key is not None:
        raise ConformanceError(
            f"{uri} [seeding]: two envs seeded with {seed} gave different rollouts (first "
            f"difference: {key}). set_seed(seed) must seed every source of randomness of the "
            f"env (the backend's reset(seed=...), its action space, its own generators)."
        )


def check_batching(
    uri: str, batching: str = "serial", num_envs: int = 2, steps: int = 4, **kwargs: Any
) -> None:
    """``num_envs`` copies batched with ``batching`` have batch size ``[num_envs]`` and match
    their specs; ``"parallel"`` must give the data ``"serial"`` gives for the same seed."""
    check = f"batching={batching}"
    env = _make(uri, check, num_envs=num_envs, batching=batching, **kwargs)
    try:
        if env.batch_size != torch.Size([num_envs]):
            raise ConformanceError(
                f"{uri} [{check}]: {num_envs} batched envs have batch size "
                f"{list(env.batch_size)}, expected [{num_envs}]"
            )
        try:
            hub.check_env_specs(env, n_steps=steps, seed=0)
        except Exception as exc:
            raise ConformanceError(
                f"{uri} [{check}]: check_env_specs failed: {type(exc).__name__}: {exc}"
            ) from exc
        if batching != "parallel":
            return
        data = _rollout(env, 0, steps)
    finally:
        env.close()
    serial = _make(uri, check, num_envs=num_envs, batching="serial", **kwargs)
    try:
        expected = _rollout(serial, 0, steps)
    finally:
        serial.close()
    key = same_data(data, expected)
    if key is not None:
        raise ConformanceError(
            f"{uri} [{check}]: worker processes gave other data than the same envs in this "
            f"process (first difference: {key}); the env depends on state its factory does "
            f"not rebuild (module globals, unseeded randomness)"
        )


def check_partial_reset(uri: str, native: bool = False, **kwargs: Any) -> None:
    """Reset one of two sub-envs through a root ``"_reset"``; the other keeps its data."""
    batching = "native" if native else "serial"
    env = _make(uri, "partial reset", num_envs=2, batching=batching, seed=0, **kwargs)
    try:
        torch.manual_seed(0)
        td = env.rand_step(env.reset())
        nxt = hub.step_mdp(td)
        mask = torch.zeros(env.full_done_spec["done"].shape, dtype=torch.bool)
        mask[0] = True
        nxt.set("_reset", mask)
        out = env.reset(nxt.clone())
        for key in env.full_observation_spec.keys(include_nested=True, leaves_only=True):
            after, before = out.get(key), nxt.get(key)
            if not isinstance(after, torch.Tensor):
                continue  # non-tensor entries have no rows to compare
            if not _same_rows(after[1], before[1]):
                raise ConformanceError(
                    f"{uri} [partial reset]: resetting sub-env 0 only changed {key!r} of sub-env "
                    f"1; _reset must keep the data of the sub-envs it does not reset (hub masks "
                    f"them when the env's _reset returns every row; an env that cannot reset "
                    f"one sub-env must reset all and say so in its docs)"
                )
        for key in env.done_keys:
            if bool(out.get(key)[0].any()):
                raise ConformanceError(
                    f"{uri} [partial reset]: after resetting sub-env 0 its {key!r} is still set"
                )
    finally:
        env.close()


def _same_rows(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def check_close(uri: str, **kwargs: Any) -> None:
    """``close()`` twice is fine; afterwards ``reset`` and ``step`` raise ``HubError``."""
    env = _make(uri, "close", **kwargs)
    td = env.reset()
    env.close()
    env.close()
    if not env.is_closed:
        raise ConformanceError(f"{uri} [close]: is_closed is False after close()")
    for what, call in (("reset", env.reset), ("step", lambda: env.step(env.rand_action(td)))):
        try:
            call()
        except hub.errors.HubError:
            continue
        except Exception as exc:
            raise ConformanceError(
                f"{uri} [close]: {what}() on a closed env raised {type(exc).__name__}: {exc}; "
                f"expected hub's ClosedEnvError (do not override reset/step, write _close)"
            ) from exc
        raise ConformanceError(f"{uri} [close]: {what}() on a closed env did not raise")


def check_factory_pickles(uri: str, **kwargs: Any) -> None:
    """The factory worker processes receive pickles, and builds an env with the same specs."""
    namespace, _, env_id = uri.partition(":")
    factory = functools.partial(hub.registry.make_env_single, namespace, env_id, **kwargs)
    try:
        rebuilt = pickle.loads(pickle.dumps(factory))
    except Exception as exc:
        raise ConformanceError(
            f"{uri} [pickle]: the env factory with make_env's keyword arguments "
            f"({_kwargs_text(kwargs)}) does not pickle: {type(exc).__name__}: {exc}; "
            f"ParallelEnv sends it to worker processes"
        ) from exc
    original = _make(uri, "pickle", **kwargs)
    copy = rebuilt()
    try:
        for name in ("full_observation_spec", "full_action_spec", "full_reward_spec"):
            if getattr(original, name) != getattr(copy, name):
                raise ConformanceError(
                    f"{uri} [pickle]: the env built by the unpickled factory has another "
                    f"{name}: {getattr(copy, name)} instead of {getattr(original, name)}"
                )
    finally:
        original.close()
        copy.close()


def check_internal_names(uri: str, **kwargs: Any) -> None:
    """The env's own classes (and the env object) define no underscore name that hub's env
    classes use internally, except the hooks of the subclass contract
    (:func:`hub.envs.hook_table.subclass_contract`): a plugin names its private attributes
    freely, but one that clashes with hub's silently replaces its machinery."""
    from hub.envs.hook_table import contract_names

    env = _make(uri, "names", **kwargs)
    try:
        mro = [c for c in type(env).__mro__ if c is not object]
        ours = [c for c in mro if c.__module__.split(".")[0] == "hub"]
        internal = {
            name
            for cls in ours
            for name in vars(cls)
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
        }
        internal -= contract_names()
        clashes = sorted(
            f"{cls.__qualname__}.{name}"
            for cls in mro
            if cls not in ours
            for name in vars(cls)
            if name in internal
        )
        clashes += sorted(
            f"instance attribute {name}"
            for name in vars(env)
            if name in internal and callable(getattr(type(env), name, None))
        )
        if clashes:
            raise ConformanceError(
                f"{uri} [names]: {', '.join(clashes)} replace(s) an internal name of hub's env "
                "classes; rename them (a plugin's private names are free, except these), or "
                "override only the hooks of the subclass contract (docs/plugins.md)"
            )
    finally:
        env.close()


ENV_CHECKS = {
    "specs": check_specs,
    "seeding": check_seeding,
    "serial": functools.partial(check_batching, batching="serial"),
    "parallel": functools.partial(check_batching, batching="parallel"),
    "native": functools.partial(check_batching, batching="native"),
    "partial_reset": check_partial_reset,
    "close": check_close,
    "pickle": check_factory_pickles,
    "names": check_internal_names,
}
