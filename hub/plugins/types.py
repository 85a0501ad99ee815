"""The data classes that plugin hooks return, and the record of a loaded plugin.

A plugin builds these objects in its hooks and returns them; hub never asks a plugin for anything
else. Building one imports nothing: a namespace names its backend through ``requires`` (import
names that hub checks with :func:`importlib.util.find_spec`) and imports it only inside ``make``.

Example:
    >>> from hub.plugins import Namespace
    >>> ns = Namespace("toy", make=lambda env_id, **kw: None, requires=["toylib"])
    >>> ns.requires
    ('toylib',)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Namespace",
    "SpecConversion",
    "BatchingStrategy",
    "PluginInfo",
    "HubPluginWarning",
    "dotted_name",
]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_DOTTED = re.compile(r"^[A-Za-z_][^\s.:]*(\.[^\s.:]+)+$")  # local classes hold "<locals>"


class HubPluginWarning(UserWarning):
    """A plugin failed to import or register; hub goes on without it."""


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"{kind} name must be a non-empty string of letters, digits, '_', '-' or '.', "
            f"with no ':' or '/', got {name!r}."
        )


def _check_supported(supported: Any) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not isinstance(supported, Mapping):
        raise TypeError(
            "Namespace.supported maps distribution names to version specifiers, such as "
            f"{{'gymnasium': '>=0.26,<1.5'}}; got {supported!r}."
        )
    for dist, spec in supported.items():
        try:
            SpecifierSet(spec)
        except (InvalidSpecifier, TypeError):
            raise ValueError(
                f"Namespace.supported[{dist!r}] must be a PEP 440 specifier such as "
                f"'>=0.26,<1.5', got {spec!r}."
            ) from None


def _check_optional(optional: Any) -> None:
    if not isinstance(optional, Mapping) or not all(
        isinstance(k, str) and k and isinstance(v, str) and v for k, v in optional.items()
    ):
        raise TypeError(
            "Namespace.optional maps import names to the line that installs each, such as "
            f"{{'Box2D': 'pip install \"gymnasium[box2d]\"'}}; got {optional!r}."
        )


def _check_callable(kind: str, attribute: str, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"{kind}.{attribute} must be callable, got {value!r}.")


def dotted_name(type_or_name: type | str) -> str:
    """The ``"package.module.Class"`` name of a class, or a checked dotted name.

    Example:
        >>> from collections import OrderedDict
        >>> dotted_name(OrderedDict)
        'collections.OrderedDict'
        >>> dotted_name("gymnasium.spaces.Box")
        'gymnasium.spaces.Box'
    """
    if isinstance(type_or_name, type):
        return f"{type_or_name.__module__}.{type_or_name.__qualname__}"
    if not isinstance(type_or_name, str) or not _DOTTED.match(type_or_name):
        raise ValueError(
            "a spec conversion is keyed by the dotted path of a class, such as "
            f"'gymnasium.spaces.Box' (module, then class name), got {type_or_name!r}."
        )
    return type_or_name


@dataclass(frozen=True)
class Namespace:
    """A namespace of envs, such as ``hub`` in ``"hub:Pendulum"``; returned by ``hub_namespaces``.

    Args:
        name: the part of a URI before the ``:``.
        make: ``make(env_id, **kwargs) -> EnvBase`` builds one env; it receives ``num_envs=N``
            when ``native_batching`` is true and hub asks for ``N`` envs in one object.
        list_envs: ``list_envs() -> Iterable[str]`` gives the bare ids ``make`` accepts (every one
            of them); ``None`` when the ids cannot be listed (then bare ids never resolve here and
            any id is passed to ``make``).
        native_batching: ``make`` can build a batch of envs itself (one object, batch size
            ``[N]``), as EnvPool does.
        native_async: ``make`` also takes ``batch_size=B`` (below ``num_envs``) for first-ready
            async batches of its own (``step_send``/``step_fetch`` with ``"env_id"``), as
            EnvPool's async mode; otherwise ``make_env(..., batch_size=B)`` uses hub's
            ``ParallelEnv``.
        extra: the ``hub`` extra that installs the backend (``pip install "hub[extra]"``).
        requires: top-level import names the backend needs; checked with
            :func:`importlib.util.find_spec`, never imported.
        description: one line for ``hub plugins`` and ``hub envs``.
        supported: the versions the plugin is tested with, as ``{distribution: specifier}``
            (``{"gymnasium": ">=0.26,<1.5"}``, PEP 440); ``hub doctor`` warns when an installed
            version lies outside, and ``docs/compatibility.md`` lists them.
        optional: modules that only some envs of the namespace need, as ``{import name: the
            line that installs it}`` (``{"Box2D": 'pip install "gymnasium[box2d]"'}``); ``hub
            doctor`` lists the missing ones, and building an env that needs a missing one raises
            :class:`hub.errors.MissingDependencyError` with that line.

    Example:
        >>> from hub.plugins import Namespace
        >>> def make(env_id, **kwargs):
        ...     raise NotImplementedError
        >>> Namespace("toy", make=make, list_envs=lambda: ["Walk-v0"]).native_batching
        False
    """

    name: str
    make: Callable[..., Any]
    list_envs: Callable[[], Iterable[str]] | None = None
    native_batching: bool = False
    extra: str | None = None
    requires: tuple[str, ...] = ()
    description: str = ""
    supported: Mapping[str, str] = field(default_factory=dict)
    optional: Mapping[str, str] = field(default_factory=dict)
    native_async: bool = False

    def __post_init__(self) -> None:
        _check_name("Namespace", self.name)
        _check_supported(self.supported)
        _check_optional(self.optional)
        _check_callable("Namespace", "make", self.make)
        if self.list_envs is not None:
            _check_callable("Namespace", "list_envs", self.list_envs)
        if isinstance(self.requires, str):
            object.__setattr__(self, "requires", (self.requires,))
        requires = tuple(self.requires)
        for name in requires:
            if not isinstance(name, str) or not name:
                raise TypeError(f"Namespace.requires holds import names (strings), got {name!r}.")
        object.__setattr__(self, "requires", requires)
        object.__setattr__(self, "native_batching", bool(self.native_batching))
        object.__setattr__(self, "native_async", bool(self.native_async))
        if self.native_async and not self.native_batching:
            raise ValueError(
                f"Namespace {self.name!r}: native_async=True needs native_batching=True (its "
                "async batches are native batches)."
            )


@dataclass(frozen=True)
class SpecConversion:
    """A converter from a foreign space or spec type to a hub spec; returned by
    ``hub_spec_conversions``.

    Args:
        type_name: the dotted path of the foreign class (``"gymnasium.spaces.Box"`` or
            ``"gymnasium.spaces.box.Box"``); a string, so that registering imports nothing.
            A class is accepted too and turned into its dotted path.
        convert: ``convert(obj, **kwargs) -> hub spec``; it may call :func:`hub.convert_spec` for
            the children of a container space. It must return a hub spec: anything else is
            reported as an error of the plugin where the conversion is used.
        override: this conversion replaces another plugin's for the same class (a built-in
            one, for example). Without it, a second conversion for a class that already has one
            is an error of the plugin that came later, also when the two name the class by
            different paths (``"gymnasium.spaces.box.Box"`` and ``"gymnasium.spaces.Box"``).
            ``hub plugins`` and ``hub doctor`` show every override.

    Example:
        >>> from hub.plugins import SpecConversion
        >>> SpecConversion("toylib.spaces.Box", convert=lambda space, **kw: None).type_name
        'toylib.spaces.Box'
    """

    type_name: str
    convert: Callable[..., Any]
    override: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_name", dotted_name(self.type_name))
        _check_callable("SpecConversion", "convert", self.convert)
        object.__setattr__(self, "override", bool(self.override))


@dataclass(frozen=True)
class BatchingStrategy:
    """A way to run ``num_envs`` copies of an env as one env; returned by ``hub_batching``.

    ``hub.make_env(uri, num_envs=N, batching=name)`` calls ``make(create_env_fn, N)``, where
    ``create_env_fn()`` builds one env and is picklable.

    Args:
        name: the value of ``batching=`` that selects it (not ``auto``, ``serial``, ``parallel``
            or ``native``, which hub defines).
        make: ``make(create_env_fn, num_envs, **kwargs) -> EnvBase`` with batch size
            ``[num_envs]``.
        description: one line for ``hub plugins``.
        options: the keyword arguments of ``make_env`` that belong to the strategy rather than
            to the namespace (``envs_per_actor`` for Ray): ``make_env`` passes those it was given
            to ``make`` as keyword arguments. The name ``create_batch_fn`` among them asks for
            one more: ``create_batch_fn(k)``, a picklable callable that builds ``k`` envs as
            one env of batch size ``[k]`` through the namespace's native batching (``None``
            when the namespace has none).

    Example:
        >>> from hub.plugins import BatchingStrategy
        >>> BatchingStrategy("ray", make=lambda create_env_fn, num_envs, **kw: None).name
        'ray'
    """

    name: str
    make: Callable[..., Any]
    description: str = ""
    options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_name("BatchingStrategy", self.name)
        _check_callable("BatchingStrategy", "make", self.make)
        if isinstance(self.options, str):
            object.__setattr__(self, "options", (self.options,))
        options = tuple(self.options)
        for option in options:
            if not isinstance(option, str) or not option.isidentifier():
                raise TypeError(
                    f"BatchingStrategy.options holds keyword argument names, got {option!r}."
                )
        object.__setattr__(self, "options", options)


@dataclass(frozen=True)
class PluginInfo:
    """What hub knows about one plugin: ``hub.list_plugins()`` returns these.

    Attributes:
        name: the entry-point name (or the name an in-memory plugin was registered with).
        version: the version of the plugin's distribution, from its metadata.
        module: the module the entry point names.
        namespaces: the namespaces it serves.
        error: why it failed to import or register (``"ImportError: ..."``), or ``None``.
        builtin: it ships with hub itself.
        hooks: the hooks it implements.
        distribution: the name of its distribution.
        load_time: seconds it took to import and register (``None`` if not measured).
        traceback: the full traceback of its failure (for a plugin that hung: where it was
            stuck at the deadline), or ``None``.
        overrides: the spec conversions it declares with ``override=True`` (dotted names).
        claimed: the namespaces it declared, also when it failed (a failed plugin serves none).

    Example:
        >>> from hub.plugins import PluginInfo
        >>> info = PluginInfo("toy", "1.0", "toy.plugin", ("toy",), None, False, ("hub_namespaces",))
        >>> info.to_json()["namespaces"]
        ['toy']
    """

    name: str
    version: str | None
    module: str | None
    namespaces: tuple[str, ...] = ()
    error: str | None = None
    builtin: bool = False
    hooks: tuple[str, ...] = ()
    distribution: str | None = field(default=None, compare=False)
    load_time: float | None = field(default=None, compare=False)
    traceback: str | None = field(default=None, compare=False)
    overrides: tuple[str, ...] = field(default=(), compare=False)
    claimed: tuple[str, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``hub plugins --json`` prints: name, version, module, namespaces,
        error, load_time (seconds), traceback and overrides."""
        return {
            "name": self.name,
            "version": self.version,
            "module": self.module,
            "namespaces": list(self.namespaces),
            "error": self.error,
            "load_time": self.load_time,
            "traceback": self.traceback,
            "overrides": list(self.overrides),
        }
