"""Backend families and the active backend of each, held in a context variable.

A *backend family* is a set of interchangeable libraries (family ``"gym"``: ``gymnasium`` and
``gym``). The core declares ``"gym"`` (:data:`GYM_FAMILY`, which :func:`set_gym_backend`
names); plugins declare more (hook ``hub_backends``), and the plugin manager registers them here
when it loads the plugins: this module never calls up into the plugin system. Users pick the *active* member with
:class:`set_backend` (or :func:`set_gym_backend`), and version-dispatched functions follow that
choice. The choice lives in one :class:`contextvars.ContextVar`: it is local to a thread (a new
thread starts from the defaults) and to an asyncio task, and nothing global is rewritten.

Example:
    >>> from hub.dispatch import BackendFamily, register_backend_family, set_backend, get_backend
    >>> _ = register_backend_family(BackendFamily("doc-codec", ("json", "pickle")))
    >>> get_backend("doc-codec").__name__
    'json'
    >>> with set_backend("doc-codec", "pickle"):
    ...     get_backend("doc-codec").__name__
    'pickle'
    >>> unregister_backend_family("doc-codec")
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from hub.dispatch import versions
from hub.errors import BackendError, MissingDependencyError

__all__ = [
    "BackendFamily",
    "GYM_FAMILY",
    "active_backend",
    "backend_state",
    "family_of",
    "get_backend",
    "get_backend_family",
    "gym_backend",
    "list_backend_families",
    "register_backend_family",
    "restore_backend_state",
    "set_backend",
    "set_gym_backend",
    "unregister_backend_family",
]

F = TypeVar("F", bound=Callable[..., Any])

# The explicit choices of this context: a frozenset of (family, module) pairs. A frozenset is
# immutable, hashable, compared by value and caches its hash, so dispatchers key their caches
# by it directly (one ContextVar.get and one dict lookup per call).
_ACTIVE: contextvars.ContextVar[frozenset[tuple[str, str]]] = contextvars.ContextVar(
    "hub_active_backends", default=frozenset()
)

_registry_lock = threading.RLock()
_families: dict[str, BackendFamily] = {}
_module_family: dict[str, str] = {}  # candidate module -> family name
_process_defaults: dict[str, str] = {}  # from restore_backend_state (e.g. in a worker)
_active_cache: dict[tuple[frozenset[tuple[str, str]], str], tuple[str | None, str]] = {}


@dataclass(frozen=True)
class BackendFamily:
    """Interchangeable libraries, in order of preference (the first installed one is the default).

    Args:
        name: the family's name, e.g. ``"gym"``.
        candidates: top-level module names, e.g. ``("gymnasium", "gym")``.
        description: one line for listings.

    Example:
        >>> BackendFamily("gym", ["gymnasium", "gym"]).candidates
        ('gymnasium', 'gym')
    """

    name: str
    candidates: tuple[str, ...]
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise BackendError(f"a backend family needs a non-empty name, got {self.name!r}.")
        if isinstance(self.candidates, str):
            raise BackendError(
                f"candidates of family {self.name!r} must be a sequence of module names, got "
                f"the string {self.candidates!r}; write ({self.candidates!r},)."
            )
        candidates = tuple(self.candidates)
        bad = [c for c in candidates if not isinstance(c, str) or not c.isidentifier()]
        if not candidates or bad:
            raise BackendError(
                f"family {self.name!r} needs one or more top-level module names as candidates "
                f"(like 'gymnasium'), got {candidates!r}."
            )
        if len(set(candidates)) != len(candidates):
            raise BackendError(f"family {self.name!r} lists a candidate twice: {candidates!r}.")
        object.__setattr__(self, "candidates", candidates)


def _invalidate() -> None:
    # Replace rather than clear: an answer computed before the change lands in the old dict.
    global _active_cache
    _active_cache = {}


versions._on_change.append(_invalidate)


def register_backend_family(family: BackendFamily, *, replace: bool = False) -> BackendFamily:
    """Declare a backend family; registering the same candidates again is a no-op.

    Raises :class:`~hub.errors.BackendError` when the name is taken by other candidates (unless
    ``replace=True``) or when a candidate already belongs to another family.

    Example:
        >>> fam = register_backend_family(BackendFamily("doc-fam", ("json",)))
        >>> get_backend_family("doc-fam") is fam
        True
        >>> unregister_backend_family("doc-fam")
    """
    if not isinstance(family, BackendFamily):
        raise BackendError(f"register_backend_family expects a BackendFamily, got {family!r}.")
    with _registry_lock:
        old = _families.get(family.name)
        if old is not None and old.candidates == family.candidates:
            return old
        if old is not None and not replace:
            raise BackendError(
                f"backend family {family.name!r} is already registered with candidates "
                f"{old.candidates!r}; cannot register it again with {family.candidates!r}. "
                "Pass replace=True to replace it."
            )
        for module in family.candidates:
            owner = _module_family.get(module)
            if owner is not None and owner != family.name:
                raise BackendError(
                    f"{module!r} already belongs to backend family {owner!r}; a module can belong "
                    f"to one family only, so family {family.name!r} cannot list it."
                )
        if old is not None:
            _forget(old)
        _families[family.name] = family
        for module in family.candidates:
            _module_family[module] = family.name
    versions._changed()
    return family


def unregister_backend_family(name: str) -> None:
    """Remove a backend family (plugin teardown, tests); unknown names are ignored.

    Example:
        >>> unregister_backend_family("no-such-family")
    """
    with _registry_lock:
        family = _families.get(name)
        if family is None:
            return
        _forget(family)
    versions._changed()


def _forget(family: BackendFamily) -> None:
    del _families[family.name]
    for module in family.candidates:
        if _module_family.get(module) == family.name:
            del _module_family[module]


def get_backend_family(name: str) -> BackendFamily:
    """The registered family of that name.

    Example:
        >>> get_backend_family("no-such-family")
        Traceback (most recent call last):
        ...
        hub.errors.BackendError: unknown backend family 'no-such-family'. Known families: ...
    """
    family = _families.get(name)
    if family is None:
        known = ", ".join(repr(n) for n in sorted(_families)) or "none"
        raise BackendError(
            f"unknown backend family {name!r}. Known families: {known}. Families are declared "
            "by plugins (hook hub_backends), registered when the plugins load: if a plugin "
            "declares this one, load them first (hub.list_plugins()); or register it with "
            "hub.dispatch.register_backend_family."
        )
    return family


def list_backend_families() -> list[BackendFamily]:
    """Every registered family, sorted by name (those of plugins once the plugins are loaded).

    Example:
        >>> all(isinstance(f, BackendFamily) for f in list_backend_families())
        True
    """
    return [_families[name] for name in sorted(_families)]


def family_of(module_name: str) -> BackendFamily | None:
    """The family a module belongs to (by its top-level name), or ``None``.

    Example:
        >>> family_of("json.decoder") is None
        True
    """
    name = _module_family.get(versions.top_level(module_name))
    return None if name is None else _families.get(name)


def _choose(family: BackendFamily, backend: str | ModuleType) -> str:
    """Validate a backend given by name or module object; return its module name."""
    if isinstance(backend, ModuleType):
        name = versions.top_level(backend.__name__)
    elif isinstance(backend, str):
        name = backend
    else:
        raise BackendError(
            f"a backend is given by module name or module object, got {backend!r} for family "
            f"{family.name!r} (candidates: {', '.join(family.candidates)})."
        )
    if name not in family.candidates:
        raise BackendError(
            f"{name!r} is not a backend of family {family.name!r}; its candidates are "
            f"{', '.join(repr(c) for c in family.candidates)}."
        )
    return name


def active_backend(family: str) -> str | None:
    """The module name of the active backend of a family now, or ``None`` if none is installed.

    In order: the choice of this context (:class:`set_backend`), the choice restored from a
    parent process (:func:`restore_backend_state`), the first installed candidate.

    Example:
        >>> _ = register_backend_family(BackendFamily("doc-codec", ("json", "pickle")))
        >>> active_backend("doc-codec")
        'json'
        >>> unregister_backend_family("doc-codec")
    """
    return _active_and_reason(family)[0]


def _active_and_reason(family_name: str) -> tuple[str | None, str]:
    state = _ACTIVE.get()
    key = (state, family_name)
    cache = _active_cache
    cached = cache.get(key)
    if cached is not None:
        return cached
    family = get_backend_family(family_name)
    chosen = dict(state).get(family.name)
    if chosen is not None:
        answer = (chosen, "chosen with set_backend in this context")
    elif family.name in _process_defaults:
        chosen = _process_defaults[family.name]
        if chosen not in family.candidates:
            raise BackendError(
                f"the {family.name!r} backend restored from the parent process is {chosen!r}, "
                f"which is not a candidate of the family ({', '.join(family.candidates)})."
            )
        answer = (chosen, "restored from the parent process")
    else:
        installed = [c for c in family.candidates if versions.is_installed(c)]
        order = ", ".join(family.candidates)
        if installed:
            answer = (installed[0], f"default: the first installed of {order}")
        else:
            answer = (None, f"none of {order} is installed")
    cache[key] = answer
    return answer


class set_backend:  # noqa: N801 - used like a function, as a context manager or decorator
    """Make ``backend`` the active member of ``family``: a context manager and a decorator.

    As a context manager it sets the backend until the block ends, for this thread or task
    only. As a decorator it sets it for each call of the decorated function (for a coroutine
    function, while it runs; for a generator function, during each of its steps). ``backend``
    is a module name or a module object.

    Example:
        >>> import json, pickle
        >>> _ = register_backend_family(BackendFamily("doc-codec", ("json", "pickle")))
        >>> @set_backend("doc-codec", pickle)
        ... def codec():
        ...     return get_backend("doc-codec").__name__
        >>> codec(), get_backend("doc-codec").__name__
        ('pickle', 'json')
        >>> unregister_backend_family("doc-codec")
    """

    def __init__(self, family: str, backend: str | ModuleType) -> None:
        fam = get_backend_family(family)
        self.family: str = fam.name
        self.backend: str = _choose(fam, backend)
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"set_backend({self.family!r}, {self.backend!r})"

    def _set(self) -> contextvars.Token[frozenset[tuple[str, str]]]:
        if not versions.is_installed(self.backend):
            others = [c for c in get_backend_family(self.family).candidates if c != self.backend]
            installed = [c for c in others if versions.is_installed(c)]
            raise MissingDependencyError(
                self.backend,
                message=(
                    f"cannot make {self.backend!r} the active {self.family!r} backend: it is not "
                    f"installed. Install it (pip install {self.backend}) or choose an installed "
                    f"one: {', '.join(installed) or 'none is installed'}."
                ),
            )
        state = _ACTIVE.get()
        new = frozenset(
            [(f, m) for f, m in state if f != self.family] + [(self.family, self.backend)]
        )
        return _ACTIVE.set(new)

    def __enter__(self) -> set_backend:
        tokens = self._local.__dict__.setdefault("tokens", [])
        tokens.append(self._set())
        return self

    def __exit__(self, *exc_info: object) -> None:
        _ACTIVE.reset(self._local.tokens.pop())

    def __call__(self, fn: F) -> F:
        import inspect

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                token = self._set()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    _ACTIVE.reset(token)

            return async_wrapper  # type: ignore[return-value]

        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def generator_wrapper(*args: Any, **kwargs: Any) -> Any:
                # Each step of the generator runs under the backend; between steps the
                # consumer's own choice is in force.
                gen = fn(*args, **kwargs)
                sent: Any = None
                thrown: BaseException | None = None
                while True:
                    token = self._set()
                    try:
                        item = gen.send(sent) if thrown is None else gen.throw(thrown)
                    except StopIteration as stop:
                        return stop.value
                    finally:
                        _ACTIVE.reset(token)
                    try:
                        sent, thrown = (yield item), None
                    except GeneratorExit:
                        gen.close()
                        raise
                    except BaseException as err:  # thrown in by the consumer: pass it on
                        sent, thrown = None, err

            return generator_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = self._set()
            try:
                return fn(*args, **kwargs)
            finally:
                _ACTIVE.reset(token)

        return wrapper  # type: ignore[return-value]


def get_backend(family: str, sub: str | None = None) -> ModuleType:
    """Import and return the active backend of a family, or its submodule ``sub``.

    Example:
        >>> _ = register_backend_family(BackendFamily("doc-codec", ("json", "pickle")))
        >>> get_backend("doc-codec", "decoder").__name__
        'json.decoder'
        >>> unregister_backend_family("doc-codec")
    """
    name, reason = _active_and_reason(family)
    if name is None:
        candidates = get_backend_family(family).candidates
        raise MissingDependencyError(
            candidates[0],
            message=(
                f"no {family!r} backend is installed: install one of "
                f"{', '.join(candidates)} (for example: pip install {candidates[0]})."
            ),
        )
    target = f"{name}.{sub}" if sub else name
    module = sys.modules.get(target)
    if module is not None:
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as err:
        if not sub or err.name != target:
            raise
        version = versions.module_version(name)
        raise MissingDependencyError(
            name,
            message=(
                f"{target!r} does not exist in the active {family!r} backend, {name} "
                f"{version or '(version unknown)'} ({reason}). That version may not have "
                f"{sub!r}; check the backend version or switch backend with set_backend."
            ),
        ) from err


def set_gym_backend(backend: str | ModuleType) -> set_backend:
    """``set_backend("gym", backend)``: context manager and decorator.

    Example:
        >>> set_gym_backend  # doctest: +ELLIPSIS
        <function set_gym_backend at ...>
    """
    return set_backend("gym", backend)


def gym_backend(sub: str | None = None) -> ModuleType:
    """``get_backend("gym", sub)``: the active gym-family module, or one of its submodules.

    Example:
        >>> gym_backend  # doctest: +ELLIPSIS
        <function gym_backend at ...>
    """
    return get_backend("gym", sub)


def backend_state() -> dict[str, str]:
    """The explicitly chosen backends here (family -> module): what a worker process needs.

    Example:
        >>> _ = register_backend_family(BackendFamily("doc-codec", ("json", "pickle")))
        >>> with set_backend("doc-codec", "pickle"):
        ...     backend_state()["doc-codec"]
        'pickle'
        >>> unregister_backend_family("doc-codec")
    """
    return {**_process_defaults, **dict(_ACTIVE.get())}


def restore_backend_state(state: Mapping[str, str]) -> None:
    """Make the choices of :func:`backend_state` the defaults of this process (in a worker).

    Every thread of the process then starts with them; :class:`set_backend` still overrides.
    Families need not be registered yet: a choice is checked when it is first used.

    Example:
        >>> restore_backend_state({})
    """
    if not isinstance(state, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in state.items()
    ):
        raise BackendError(
            f"restore_backend_state expects a mapping of family name to module name, as "
            f"backend_state() returns, got {state!r}."
        )
    with _registry_lock:
        _process_defaults.clear()
        _process_defaults.update(state)
    versions._changed()


GYM_FAMILY = register_backend_family(
    BackendFamily(
        "gym", ("gymnasium", "gym"), description="gymnasium or gym: choose with hub.set_gym_backend"
    )
)
"""The ``"gym"`` family, declared by the core since :func:`set_gym_backend` names it."""
