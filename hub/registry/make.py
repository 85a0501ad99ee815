"""``make_env``, ``list_envs`` and ``list_plugins``: the front door of hub.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Pendulum", num_envs=2, seed=0)
    >>> env.batch_size
    torch.Size([2])
    >>> "hub:Pendulum" in hub.list_envs("hub")
    True
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from hub.errors import BatchingError
from hub.plugins import (
    BatchingStrategy,
    HubPluginManager,
    HubPluginWarning,
    Namespace,
    PluginInfo,
    ensure_plugins_loaded,
)
from hub.registry.guards import build_env
from hub.registry.uris import get_namespace, missing_requirement, resolution_order, resolve

__all__ = [
    "make_env",
    "make_env_single",
    "make_env_batch",
    "list_envs",
    "list_plugins",
    "batching_strategies",
]

BUILTIN_BATCHING = ("auto", "serial", "parallel", "native")
#: make_env's keywords that ParallelEnv takes (not the namespace's make)
PARALLEL_OPTIONS = ("num_workers", "envs_per_worker", "start_method", "restart_failed")


def make_env(
    uri: str,
    *,
    num_envs: int | None = None,
    batching: str = "auto",
    seed: int | None = None,
    device: Any = None,
    transforms: Any = None,
    checks: bool | None = None,
    torchrl: bool = False,
    timeout: float | None = None,
    **kwargs: Any,
) -> Any:
    """Build the env named by ``uri`` (``"namespace:id"`` or a bare id).

    Args:
        uri: ``"envpool:Pong-v5"``, ``"hub:Pendulum"``, or a bare id (``"Pendulum"``) looked up in
            the order of :func:`hub.registry.resolution_order`.
        num_envs: build this many copies as one env of batch size ``[num_envs]``; ``None`` builds
            one env.
        batching: how to batch ``num_envs`` copies: ``"auto"`` (the namespace's native batching,
            else ``ParallelEnv``, else ``SerialEnv``), ``"native"``, ``"serial"``, ``"parallel"``,
            or the name of a strategy a plugin declares.
        seed: passed to ``env.set_seed``.
        device: passed to the namespace's ``make`` as ``device=``.
        transforms: a list of transforms, wrapped as ``TransformedEnv(env, Compose(*transforms))``,
            or one transform (a ``Compose`` too), wrapped as ``TransformedEnv(env, transform)``.
        checks: sets ``env.checks`` (per-step checks of actions and outputs against the specs).
        torchrl: return the env as a TorchRL ``EnvBase`` (:func:`hub.to_torchrl`; needs
            ``pip install "hub[torchrl]"``), for TorchRL's collectors, transforms and checks.
        timeout: with ``num_envs``, the batched env's ``timeout`` (seconds a call on the
            sub-envs may take; see ``docs/batching.md``), passed to ``SerialEnv``,
            ``ParallelEnv`` and plugin strategies alike. Native batching has none and refuses it.
        num_workers, envs_per_worker, start_method, restart_failed: with
            ``batching="parallel"``, passed to ``ParallelEnv`` (how many worker processes, or
            how many sub-envs each holds; see ``docs/batching.md``).
        **kwargs: passed to the namespace's ``make``.

    Raises:
        UnknownNamespaceError, UnknownEnvError, MissingDependencyError: the URI cannot be served;
            the message says what is known and what to install (a module the backend imports
            while building the env and that is not installed is a MissingDependencyError too).
        PluginError: the plugin's ``make`` returned something that is not a ``hub.EnvBase``.
        InvalidSeedError: ``seed`` is not an int in ``[0, 2**32)``.

    Example:
        >>> import hub
        >>> hub.make_env("Counting").batch_size
        torch.Size([])
    """
    from hub.envs.seeding import check_seed  # hub.envs imports torch: only when building

    seed = check_seed(seed)
    manager = ensure_plugins_loaded()
    ns, env_id = resolve(uri, manager)
    if device is not None:
        kwargs["device"] = device
    if num_envs is None:
        if timeout is not None:
            raise BatchingError(
                "timeout= bounds the calls of a batched env: pass num_envs=N as well (a single "
                "env runs in this process, with nothing to bound it)."
            )
        if batching != "auto":
            raise BatchingError(
                f"batching={batching!r} batches several envs: pass num_envs=N as well "
                "(or leave batching='auto' for one env)."
            )
        env = _build(manager, ns, env_id, lambda: ns.make(env_id, **kwargs))
    else:
        env = _make_batched(
            manager, ns, env_id, _check_num_envs(num_envs), batching, kwargs, timeout
        )
    if checks is not None:
        env.checks = checks
    if seed is not None:
        env.set_seed(seed)
    if transforms is not None:
        env = _transformed(env, transforms)
    _remember_factory(
        env, uri, num_envs, batching, device, transforms, checks, timeout, seed, kwargs
    )
    if torchrl:
        from hub.export import to_torchrl

        env = to_torchrl(env)
    return env


def _remember_factory(
    env: Any,
    uri: str,
    num_envs: Any,
    batching: str,
    device: Any,
    transforms: Any,
    checks: Any,
    timeout: Any,
    seed: int | None,
    kwargs: dict[str, Any],
) -> None:
    """Keep how to build ``env`` again (with new copies of the transforms, and seeded with the
    seed ``set_seed(seed)`` names for the next env), for the exports that reuse an env after
    ``close()`` (:mod:`hub.export.reopen`)."""
    from hub.export.reopen import remember_factory

    kwargs = {k: v for k, v in kwargs.items() if k != "device"}

    def again() -> Any:
        copies = None
        if transforms is not None:
            copies = (
                [t.clone() for t in transforms]
                if isinstance(transforms, (list, tuple))
                else transforms.clone()
            )
        fresh = make_env(
            uri,
            num_envs=num_envs,
            batching=batching,
            device=device,
            transforms=copies,
            checks=checks,
            timeout=timeout,
            **kwargs,
        )
        if seed is not None:
            fresh.set_seed(fresh.set_seed(seed))
        return fresh

    remember_factory(env, again)


def make_env_single(namespace: str, env_id: str, **kwargs: Any) -> Any:
    """Build one env of ``namespace``; the picklable factory that batched envs call in workers.

    Example:
        >>> import functools
        >>> factory = functools.partial(make_env_single, "hub", "Counting")
        >>> factory().batch_size
        torch.Size([])
    """
    manager = ensure_plugins_loaded()
    ns = get_namespace(manager, namespace)
    return _build(manager, ns, env_id, lambda: ns.make(env_id, **kwargs))


def _build(
    manager: HubPluginManager,
    ns: Namespace,
    env_id: str,
    make: Callable[[], Any],
    what: str = "make",
) -> Any:
    return build_env(
        make,
        f"{ns.name}:{env_id}",
        plugin=manager.namespace_plugin(ns.name),
        what=f"namespace {ns.name!r}'s {what}",
        install_lines=ns.optional,
    )


def make_env_batch(namespace: str, env_id: str, num_envs: int, **kwargs: Any) -> Any:
    """Build ``num_envs`` envs of ``namespace`` as one env through its native batching; the
    picklable factory a batching strategy gets as ``create_batch_fn``.

    Example:
        >>> import functools
        >>> factory = functools.partial(make_env_batch, "envpool", "CartPole-v1")
        >>> factory(3).batch_size  # doctest: +SKIP
        torch.Size([3])
    """
    manager = ensure_plugins_loaded()
    ns = get_namespace(manager, namespace)
    if not ns.native_batching:
        raise BatchingError(
            f"The namespace {namespace!r} has no native batching; build its envs one by one."
        )
    return _build(manager, ns, env_id, lambda: ns.make(env_id, num_envs=num_envs, **kwargs))


def _check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise BatchingError(
            f"num_envs must be a positive int (or None for one env), got {num_envs!r}."
        )
    return num_envs


def batching_strategies() -> list[str]:
    """The values ``make_env(batching=...)`` accepts: hub's own, then the plugins'.

    Example:
        >>> batching_strategies()[:4]
        ['auto', 'serial', 'parallel', 'native']
    """
    return [*BUILTIN_BATCHING, *sorted(ensure_plugins_loaded().batching_strategies())]


def _make_batched(
    manager: HubPluginManager,
    ns: Namespace,
    env_id: str,
    num_envs: int,
    batching: str,
    kwargs: dict[str, Any],
    timeout: float | None = None,
) -> Any:
    bound = {} if timeout is None else {"timeout": timeout}
    layout = [name for name in PARALLEL_OPTIONS if name in kwargs]
    if batching == "auto":
        batching = "native" if ns.native_batching and not layout else "parallel"
    if layout and batching != "parallel":
        raise BatchingError(
            f"{', '.join(layout)} configure ParallelEnv's worker processes: pass "
            f"batching='parallel' with them (got batching={batching!r})."
        )
    if batching == "native":
        if not ns.native_batching:
            raise BatchingError(
                f"The namespace {ns.name!r} has no native batching; use batching='serial', "
                "'parallel' or 'auto'."
            )
        if timeout is not None:
            raise BatchingError(
                f"timeout= is not available with native batching ({ns.name!r} runs its envs in "
                "its own threads, which hub cannot bound): use batching='parallel' for a "
                "timeout, or leave it out."
            )
        return _build(manager, ns, env_id, lambda: ns.make(env_id, num_envs=num_envs, **kwargs))
    factory: Callable[[], Any] = functools.partial(make_env_single, ns.name, env_id, **kwargs)
    if batching == "serial":
        from hub.batching import SerialEnv

        return SerialEnv(num_envs, factory, **bound)
    if batching == "parallel":
        from hub.batching import ParallelEnv

        layout = {name: kwargs.pop(name) for name in PARALLEL_OPTIONS if name in kwargs}
        factory = functools.partial(make_env_single, ns.name, env_id, **kwargs)
        if ns.native_batching:  # each worker holds a native batch of its sub-envs
            layout["create_batch_fn"] = functools.partial(make_env_batch, ns.name, env_id, **kwargs)
        return ParallelEnv(num_envs, factory, **layout, **bound)
    strategy: BatchingStrategy | None = manager.batching_strategies().get(batching)
    if strategy is None:
        raise BatchingError(
            f"Unknown batching strategy {batching!r}; the strategies are "
            f"{', '.join(batching_strategies())}. Plugins add more through the hub_batching hook."
        )
    options = {name: kwargs.pop(name) for name in strategy.options if name in kwargs}
    factory = functools.partial(make_env_single, ns.name, env_id, **kwargs)
    if "create_batch_fn" in strategy.options:
        options["create_batch_fn"] = (
            functools.partial(make_env_batch, ns.name, env_id, **kwargs)
            if ns.native_batching
            else None
        )
    return build_env(
        lambda: strategy.make(factory, num_envs, **options, **bound),
        f"{ns.name}:{env_id}",
        plugin=manager.batching_plugin(batching),
        what=f"batching strategy {batching!r}",
        install_lines=ns.optional,
    )


def _transformed(env: Any, transforms: Any) -> Any:
    from hub.transforms import Compose, TransformedEnv

    if isinstance(transforms, (list, tuple)):
        return TransformedEnv(env, Compose(*transforms))
    return TransformedEnv(env, transforms)  # one transform, or a Compose already


def list_envs(namespace: str | None = None) -> list[str]:
    """The URIs (``"namespace:id"``) of the envs hub can list, sorted.

    A namespace whose backend is not installed lists nothing. With ``namespace``, only that one
    (an unknown namespace raises :class:`hub.errors.UnknownNamespaceError`).

    Example:
        >>> import hub
        >>> hub.list_envs("hub")[:2]
        ['hub:Counting', 'hub:MultiAgentCounting']
    """
    manager = ensure_plugins_loaded()
    if namespace is not None:
        names = [get_namespace(manager, namespace, check_requires=False).name]
    else:
        names = resolution_order(manager)
    uris = []
    for name in names:
        ns = manager.namespace(name)
        if ns is None or ns.list_envs is None or missing_requirement(ns) is not None:
            continue
        try:
            ids = manager.env_ids(name)
        except Exception as exc:
            if namespace is not None:
                raise
            warnings.warn(
                f"listing the envs of namespace {name!r} failed and it is left out: "
                f"{type(exc).__name__}: {exc}",
                HubPluginWarning,
                stacklevel=2,
            )
            continue
        uris.extend(f"{name}:{env_id}" for env_id in ids)
    return sorted(uris)


def list_plugins() -> list[PluginInfo]:
    """Every plugin hub found, built-ins first; a failed plugin carries its ``error``.

    Example:
        >>> import hub
        >>> [(p.name, p.builtin) for p in hub.list_plugins()][0]
        ('hub', True)
    """
    return ensure_plugins_loaded().plugins()
