"""Env URIs: ``"namespace:id"`` parsing, namespace lookup and bare-id resolution.

A URI is split on its first ``:``; the id may hold ``/`` and further ``:``
(``"dm_control:cheetah/run"``, ``"gymnasium:ale_py:ALE/Pong-v5"``). A URI without ``:`` is a
*bare id*, looked up in the namespaces in :func:`resolution_order`: ``hub``, then the other
built-in namespaces (``gymnasium``, ``gym``, ``envpool``, ``dm_control``, then any other built-in
one alphabetically), then the third-party namespaces alphabetically. The first namespace whose
``list_envs`` holds the id serves it.

Example:
    >>> from hub.registry import parse_uri
    >>> parse_uri("dm_control:cheetah/run")
    ('dm_control', 'cheetah/run')
    >>> parse_uri("Pendulum")
    (None, 'Pendulum')
"""

from __future__ import annotations

import difflib
import importlib.util
from collections.abc import Iterable

from hub.errors import (
    MissingDependencyError,
    PluginError,
    UnknownEnvError,
    UnknownNamespaceError,
)
from hub.plugins import HubPluginManager, Namespace

__all__ = [
    "BUILTIN_NAMESPACES",
    "RESOLUTION_ORDER",
    "parse_uri",
    "resolution_order",
    "get_namespace",
    "missing_requirement",
    "resolve",
    "closest",
    "shown",
]

#: The namespaces that hub's own plugins serve: name -> (import name, ``hub`` extra).
BUILTIN_NAMESPACES: dict[str, tuple[str, str] | None] = {
    "hub": None,
    "gymnasium": ("gymnasium", "gymnasium"),
    "gym": ("gym", "gym"),
    "envpool": ("envpool", "envpool"),
    "dm_control": ("dm_control", "dm-control"),
}
#: Where a bare id is looked up first.
RESOLUTION_ORDER = tuple(BUILTIN_NAMESPACES)
#: How many characters of a URI (or of a part of it) an error message shows.
SHOWN_CHARS = 80


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """``repr(text)``, cut in the middle when it is longer than ``limit`` characters, so that an
    error never echoes a huge input whole.

    Example:
        >>> shown("hub:Pendulum")
        "'hub:Pendulum'"
        >>> shown("hub:" + "x" * 10_000)
        "'hub:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' (10,004 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    half = (limit - 3) // 2
    return (
        f"{text[:half]!r}"[:-1] + "..." + f"{text[-half:]!r}"[1:] + f" ({len(text):,} characters)"
    )


def _check_characters(uri: str) -> None:
    bad = [c for c in uri if c.isspace() or not c.isprintable()]
    if not bad:
        return
    stripped = "".join(c for c in uri if not (c.isspace() or not c.isprintable()))
    where = "leading " if uri[0] in bad else "trailing " if uri[-1] in bad else ""
    raise UnknownEnvError(
        f"The env URI {shown(uri)} holds {where}whitespace or control characters "
        f"({', '.join(sorted({repr(c) for c in bad}))}), which no env id has. "
        f"Did you mean {shown(stripped)}? `hub envs` lists the available ids.",
        env_id=uri,
        suggestions=(stripped,) if stripped else (),
    )


def parse_uri(uri: str) -> tuple[str | None, str]:
    """Split ``"namespace:id"`` into ``(namespace, id)``; a bare id gives ``(None, id)``.

    Raises:
        TypeError: ``uri`` is not a string.
        UnknownNamespaceError: the namespace part is empty (``":Pendulum"``).
        UnknownEnvError: the id part is empty (``"hub:"``, ``""``), or the URI holds whitespace
            or control characters (``" hub:Pendulum"`` is refused, not stripped).

    Example:
        >>> parse_uri("gymnasium:ALE/Pong-v5")
        ('gymnasium', 'ALE/Pong-v5')
    """
    if not isinstance(uri, str):
        raise TypeError(f"an env URI is a string such as 'hub:Pendulum', got {shown(repr(uri))}.")
    _check_characters(uri)
    namespace, sep, env_id = uri.partition(":")
    if not sep:
        namespace, env_id = None, namespace
    elif not namespace:
        raise UnknownNamespaceError(
            f"The env URI {shown(uri)} has an empty namespace; write 'namespace:id' (such as "
            "'hub:Pendulum') or a bare id ('Pendulum').",
            namespace="",
        )
    if not env_id:
        raise UnknownEnvError(
            f"The env URI {shown(uri)} has no env id; write 'namespace:id', such as 'hub:Pendulum'. "
            "`hub envs` lists the available ids.",
            env_id="",
        )
    return namespace, env_id


def resolution_order(manager: HubPluginManager) -> list[str]:
    """The served namespaces in the order a bare id is looked up.

    Example:
        >>> from hub.plugins import ensure_plugins_loaded
        >>> resolution_order(ensure_plugins_loaded())[0]
        'hub'
    """
    names = manager.namespace_names()
    fixed = [name for name in RESOLUTION_ORDER if name in names]
    builtin, third_party = [], []
    for name in names:
        if name in fixed:
            continue
        plugin = manager.namespace_plugin(name)
        (builtin if plugin is not None and plugin.builtin else third_party).append(name)
    return fixed + sorted(builtin) + sorted(third_party)


def missing_requirement(ns: Namespace) -> str | None:
    """The first import name of ``ns.requires`` that is not installed (checked without importing).

    Example:
        >>> from hub.plugins import Namespace
        >>> missing_requirement(Namespace("x", make=print, requires=("surely_not_installed_x",)))
        'surely_not_installed_x'
    """
    for name in ns.requires:
        top = name.split(".")[0]
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return name
    return None


def _missing_dependency(ns: Namespace, package: str, uri: str | None) -> MissingDependencyError:
    install = MissingDependencyError(package, extra=ns.extra).install_line
    what = f"{shown(uri)} needs" if uri else f"The {ns.name!r} namespace needs"
    return MissingDependencyError(
        package,
        extra=ns.extra,
        message=f"{what} {package!r}, which is not installed. Install it with: {install}",
    )


def get_namespace(
    manager: HubPluginManager, name: str, *, uri: str | None = None, check_requires: bool = True
) -> Namespace:
    """The namespace ``name``, with an error that says what to do when it cannot be used.

    Raises:
        UnknownNamespaceError: no loaded plugin serves ``name``; the message lists the known
            namespaces, the close ones, the install line of a built-in namespace whose library is
            missing, and the plugins that failed to load.
        MissingDependencyError: the namespace's backend is not installed (when
            ``check_requires``).
    """
    ns = manager.namespace(name)
    if ns is None:
        raise _unknown_namespace(manager, name, uri)
    if check_requires:
        package = missing_requirement(ns)
        if package is not None:
            raise _missing_dependency(ns, package, uri)
    return ns


def _unknown_namespace(manager: HubPluginManager, name: str, uri: str | None) -> Exception:
    known = manager.namespace_names()
    where = f" in {shown(uri)}" if uri else ""
    lines = [f"No plugin serves the env namespace {shown(name)}{where}."]
    builtin = BUILTIN_NAMESPACES.get(name)
    if builtin is not None:
        package, extra = builtin
        if not _installed(package):
            install = MissingDependencyError(package, extra=extra).install_line
            lines.append(
                f"{name!r} is a namespace of hub whose library ({package}) is not installed; "
                f"install it with: {install}"
            )
        else:
            lines.append(f"{name!r} is a namespace of hub, but its plugin is not loaded.")
    else:
        suggestions = closest(name, set(known) | set(BUILTIN_NAMESPACES))
        if suggestions:
            lines.append(f"Did you mean {', '.join(repr(s) for s in suggestions)}?")
    lines.append(f"Known namespaces: {', '.join(known) if known else '(none)'}.")
    failed = manager.failed_plugins()
    claimants = [info for info in failed if name in info.claimed]
    if claimants:
        lines.append(
            f"{'Its plugin' if len(claimants) == 1 else 'The plugins that declare it'} failed: "
            + "; ".join(f"{info.name} ({info.error})" for info in claimants)
            + ". `hub plugins` shows every plugin."
        )
    elif failed:
        owner = [info for info in failed if info.name == name]
        listed = owner or failed
        lead = "Its plugin" if owner else "These plugins"
        lines.append(
            f"{lead} failed to load: "
            + "; ".join(f"{info.name} ({info.error})" for info in listed)
            + ". `hub plugins` shows every plugin."
        )
    else:
        lines.append("`hub plugins` lists the installed plugins and `hub envs` their envs.")
    return UnknownNamespaceError(" ".join(lines), namespace=name, known=tuple(known))


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def closest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``word``: exact matches ignoring case first, then by similarity.

    Example:
        >>> closest("pendulum", ["Pendulum", "Counting"])
        ['Pendulum']
        >>> closest("Pendulm-v1", ["Pendulum-v1", "CartPole-v1"])
        ['Pendulum-v1']
    """
    candidates = sorted(set(candidates))
    if len(word) > 4 * SHOWN_CHARS:  # no id is that long: spare the similarity search
        return []
    by_lower: dict[str, list[str]] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), []).append(candidate)
    result = list(by_lower.get(word.lower(), []))
    for match in difflib.get_close_matches(word.lower(), list(by_lower), n=n, cutoff=0.6):
        result.extend(c for c in by_lower[match] if c not in result)
    return result[:n]


def resolve(uri: str, manager: HubPluginManager) -> tuple[Namespace, str]:
    """The namespace that serves ``uri`` and the bare id to give its ``make``.

    An explicit namespace that lists its ids must list ``env_id`` (ids holding ``:``, which name a
    module the backend imports first, are passed through). A bare id resolves through
    :func:`resolution_order`.

    Raises:
        UnknownNamespaceError, MissingDependencyError, UnknownEnvError: see :func:`get_namespace`;
            ``UnknownEnvError`` carries the closest ids.
    """
    name, env_id = parse_uri(uri)
    if name is None:
        return _resolve_bare(env_id, manager), env_id
    ns = get_namespace(manager, name, uri=uri)
    if ns.list_envs is not None and ":" not in env_id:
        _check_listed(ns, env_id, manager)
    return ns, env_id


def _check_listed(ns: Namespace, env_id: str, manager: HubPluginManager) -> None:
    try:
        ids = manager.env_ids(ns.name)
        if env_id not in ids:
            ids = manager.env_ids(ns.name, refresh=True)  # the backend may know more ids by now
    except Exception:  # a listing that fails must not hide the env: let make() speak
        return
    if not ids or env_id in ids:
        return
    suggestions = closest(env_id, ids)
    hint = (
        f" Did you mean {', '.join(f'{ns.name}:{s}' for s in suggestions)}?" if suggestions else ""
    )
    raise UnknownEnvError(
        f"The namespace {ns.name!r} has no env {shown(env_id)}.{hint} "
        f"`hub envs {ns.name}` lists its envs.",
        env_id=env_id,
        suggestions=tuple(f"{ns.name}:{s}" for s in suggestions),
    )


def _resolve_bare(env_id: str, manager: HubPluginManager) -> Namespace:
    order = resolution_order(manager)
    for refresh in (False, True):  # a miss asks the namespaces again: ids may have been added
        listings: dict[str, tuple[str, ...]] = {}
        skipped: list[str] = []
        for name in order:
            ns = manager.namespace(name)
            if ns is None or ns.list_envs is None:
                continue
            package = missing_requirement(ns)
            if package is not None:
                install = MissingDependencyError(package, extra=ns.extra).install_line
                skipped.append(f"{name} ({package} is not installed: {install})")
                continue
            try:
                ids = manager.env_ids(name, refresh=refresh)
            except Exception as exc:
                skipped.append(f"{name} (listing failed{_listing_failure(exc)})")
                continue
            if env_id in ids:
                return ns
            listings[name] = ids
    uris = [f"{name}:{i}" for name, ids in listings.items() for i in ids]
    by_id: dict[str, list[str]] = {}
    for candidate in uris:
        by_id.setdefault(candidate.split(":", 1)[1], []).append(candidate)
    suggestions = [u for match in closest(env_id, by_id) for u in by_id[match]][:3]
    lines = [f"No namespace serves the env id {shown(env_id)}."]
    if suggestions:
        lines.append(f"Did you mean {', '.join(suggestions)}?")
    lines.append(
        "A bare id is looked up in the namespaces "
        f"{', '.join(order) if order else '(none)'}, in that order; write 'namespace:id' to name "
        "one. `hub envs` lists every id."
    )
    if skipped:
        lines.append(f"Not searched: {'; '.join(skipped)}.")
    raise UnknownEnvError(" ".join(lines), env_id=env_id, suggestions=tuple(suggestions))


def _listing_failure(exc: Exception) -> str:
    """`` in plugin 'x': RuntimeError: ...`` for a plugin's listing that raised."""
    cause = exc.__cause__ if isinstance(exc, PluginError) and exc.__cause__ else exc
    owner = getattr(exc, "plugin", None)
    where = f" in plugin {owner!r}" if owner else ""
    return f"{where}: {type(cause).__name__}: {cause}"
