"""Conformance cases: one check of one plugin (or of one of its envs), runnable on its own.

:func:`conformance_cases` lists the cases of a plugin: the plugin checks (``strict_load``,
``lazy_import``, ``dispatch``), then every env check for every env (``list_envs()`` of its
namespaces, or the sample the author names). :func:`check_plugin` runs them all and raises one
:class:`~hub.testing.errors.ConformanceError` listing every failure. The pytest plugin
(:mod:`hub.testing.pytest_plugin`) turns the cases into one test each.

Example:
    >>> from hub.testing.cases import conformance_cases
    >>> cases = conformance_cases("hub", envs=["hub:Counting"], checks=["strict_load", "close"])
    >>> [case.id for case in cases]
    ['strict_load', 'close-hub:Counting']
    >>> cases[1].run()
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hub.testing.errors import ConformanceError
from hub.testing.isolation import isolated_plugin

__all__ = [
    "PLUGIN_CHECKS",
    "ENV_CHECK_NAMES",
    "ConformanceCase",
    "conformance_cases",
    "check_plugin",
]

PLUGIN_CHECKS = ("strict_load", "lazy_import", "dispatch")
ENV_CHECK_NAMES = (
    "specs",
    "seeding",
    "serial",
    "parallel",
    "native",
    "partial_reset",
    "close",
    "pickle",
    "names",
)


@dataclass(frozen=True)
class ConformanceCase:
    """One check: of the plugin (``uri`` is ``None``) or of one env.

    Attributes:
        plugin: the plugin's entry-point name.
        check: one of :data:`PLUGIN_CHECKS` or :data:`ENV_CHECK_NAMES`.
        uri: the env checked, for env checks.
        uris: the envs the ``dispatch`` check builds before resolving.
        native: the env's namespace batches natively (partial resets go through it).
        make_kwargs: keyword arguments for ``make_env``.
        forbidden: modules the ``lazy_import`` check forbids (``None``: the default).
    """

    plugin: str
    check: str
    uri: str | None = None
    uris: tuple[str, ...] = ()
    native: bool = False
    make_kwargs: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    forbidden: tuple[str, ...] | None = None

    @property
    def id(self) -> str:
        """The test id: ``"seeding-example:Chain-v0"``, ``"lazy_import"``."""
        return self.check if self.uri is None else f"{self.check}-{self.uri}"

    def __str__(self) -> str:
        return f"{self.plugin}:{self.id}"

    def run(self) -> Any:
        """Run the check with the plugin loaded strictly and alone; returns what it measured."""
        from hub.testing import env_checks, plugin_checks

        if self.check == "strict_load":
            return plugin_checks.check_strict_load(self.plugin)
        if self.check == "lazy_import":
            return plugin_checks.check_lazy_import(self.plugin, self.forbidden)
        if self.check == "dispatch":
            return plugin_checks.check_dispatch(self.plugin, self.uris)
        check = env_checks.ENV_CHECKS.get(self.check)
        if check is None or self.uri is None:
            raise ValueError(f"unknown conformance check {self.check!r} (uri {self.uri!r})")
        kwargs = dict(self.make_kwargs)
        if self.check == "partial_reset":
            kwargs["native"] = self.native
        with isolated_plugin(self.plugin):
            return check(self.uri, **kwargs)


def _envs_of(plugin: str, envs: Iterable[str] | None) -> tuple[list[str], dict[str, bool]]:
    """The URIs to check and, by namespace, whether it batches natively."""
    import hub
    from hub.plugins import get_plugin_manager

    with isolated_plugin(plugin) as info:
        manager = get_plugin_manager()
        native = {ns: bool(manager.namespace(ns).native_batching) for ns in info.namespaces}
        if envs is None:
            uris = [uri for ns in info.namespaces for uri in hub.list_envs(ns)]
        else:
            uris = [_full_uri(uri, info.namespaces, plugin) for uri in envs]
    for uri in uris:
        namespace = uri.partition(":")[0]
        if namespace not in native:
            raise ConformanceError(
                f"{uri}: the plugin {plugin!r} does not serve the namespace {namespace!r} "
                f"(it serves {', '.join(native) or 'none'})"
            )
    return uris, native


def _full_uri(uri: str, namespaces: Sequence[str], plugin: str) -> str:
    if uri.partition(":")[0] in namespaces:
        return uri
    if len(namespaces) == 1:
        return f"{namespaces[0]}:{uri}"
    raise ConformanceError(
        f"{uri!r}: name envs of the plugin {plugin!r} by their full URI ('namespace:id'); it "
        f"serves several namespaces ({', '.join(namespaces)})"
    )


def conformance_cases(
    plugin: str,
    envs: Iterable[str] | None = None,
    checks: Iterable[str] | None = None,
    make_kwargs: dict[str, Any] | None = None,
    forbidden: Iterable[str] | None = None,
) -> list[ConformanceCase]:
    """The cases of ``plugin``: the plugin checks, then each env check for each env.

    Args:
        plugin: the plugin's entry-point name (``hub plugins`` shows it).
        envs: the URIs (or bare ids, for a one-namespace plugin) to check; default every env
            its namespaces list. Name a sample when the list is long or needs extra downloads.
        checks: the checks to run (default all); ``native`` runs only for namespaces that
            batch natively.
        make_kwargs: keyword arguments for ``make_env`` in the env checks.
        forbidden: the modules the ``lazy_import`` check forbids (default: the namespaces'
            ``requires`` and torch).
    """
    wanted = list(checks) if checks is not None else [*PLUGIN_CHECKS, *ENV_CHECK_NAMES]
    unknown = [c for c in wanted if c not in (*PLUGIN_CHECKS, *ENV_CHECK_NAMES)]
    if unknown:
        raise ValueError(
            f"unknown conformance checks {unknown}; the checks are "
            f"{', '.join((*PLUGIN_CHECKS, *ENV_CHECK_NAMES))}"
        )
    uris, native = _envs_of(plugin, envs)
    kwargs = dict(make_kwargs or {})
    banned = tuple(forbidden) if forbidden is not None else None
    cases = [
        ConformanceCase(plugin, check, uris=tuple(uris), make_kwargs=kwargs, forbidden=banned)
        for check in PLUGIN_CHECKS
        if check in wanted
    ]
    for uri in uris:
        is_native = native[uri.partition(":")[0]]
        for check in ENV_CHECK_NAMES:
            if check not in wanted or (check == "native" and not is_native):
                continue
            cases.append(
                ConformanceCase(plugin, check, uri=uri, native=is_native, make_kwargs=kwargs)
            )
    return cases


def check_plugin(
    plugin: str,
    envs: Iterable[str] | None = None,
    checks: Iterable[str] | None = None,
    make_kwargs: dict[str, Any] | None = None,
    forbidden: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Run every conformance case of ``plugin``; returns ``{case id: what it measured}``.

    Raises:
        ConformanceError: listing every case that failed, each with its message.

    Example:
        >>> report = check_plugin("hub", envs=["hub:Counting"], checks=["specs", "close"])
        >>> sorted(report)
        ['close-hub:Counting', 'specs-hub:Counting']
    """
    report: dict[str, Any] = {}
    failures: list[str] = []
    for case in conformance_cases(plugin, envs, checks, make_kwargs, forbidden):
        try:
            report[case.id] = case.run()
        except ConformanceError as exc:
            failures.append(f"- {case.id}: {exc}")
    if failures:
        raise ConformanceError(
            f"hub plugin {plugin!r} failed {len(failures)} conformance check(s):\n"
            + "\n".join(failures)
        )
    return report
