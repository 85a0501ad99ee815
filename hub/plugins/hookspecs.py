"""The hooks a hub plugin can implement: the whole plugin API, in one file.

A plugin is a module named by an entry point of group ``hub.plugins``. It holds functions marked
with ``@hub.hookimpl`` whose names are the hooks below. Each hook takes no argument and returns a
list of the data classes of :mod:`hub.plugins.types`. hub calls every hook of every plugin once,
when a plugin is first needed (the first ``make_env``, ``list_envs``, ``list_plugins``,
``convert_spec``, or an unknown backend family), never at ``import hub``.

Rules every hook follows:

* Import nothing heavy. A hook describes what the plugin offers; the backend library is imported
  inside ``Namespace.make`` (and ``list_envs``) and by spec converters, never in a hook.
* Return a list (an empty one is fine). A hook that raises, or returns something other than the
  documented objects, makes its plugin fail as a whole: hub reports the error and uses none of that
  plugin's objects.
* Names are unique. A namespace, backend family or batching strategy that another plugin already
  declared is an error of the plugin that came later; built-in plugins come first.
* A function marked ``@hub.hookimpl`` whose name is not a hook below is an error of its plugin.

Example:
    >>> import hub
    >>> def make_toy(env_id, **kwargs):
    ...     from toy_plugin.envs import ToyEnv  # the backend is imported here, when needed
    ...     return ToyEnv(env_id, **kwargs)
    >>> @hub.hookimpl
    ... def hub_namespaces():
    ...     return [hub.Namespace("toy", make=make_toy, list_envs=lambda: ["Walk-v0"])]
    >>> [ns.name for ns in hub_namespaces()]
    ['toy']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from hub.dispatch import BackendFamily
    from hub.plugins.types import BatchingStrategy, Namespace, SpecConversion

__all__ = [
    "PROJECT",
    "hookspec",
    "hookimpl",
    "hub_namespaces",
    "hub_spec_conversions",
    "hub_backends",
    "hub_batching",
]

PROJECT = "hub"

#: Marks the hook specifications below (for hub itself).
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's hook implementations: ``@hub.hookimpl``.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def hub_namespaces() -> list[Namespace]:
    """Return the env namespaces this plugin serves, as :class:`hub.Namespace` objects.

    Called once per process, when hub first needs its plugins. Each namespace's ``make`` builds an
    env for a bare id (``"Pong-v5"`` for ``"envpool:Pong-v5"``); hub checks ``requires`` before it
    calls ``make`` and turns a missing backend into ``MissingDependencyError`` with the install
    line of ``extra``. ``list_envs`` gives the ids for ``hub envs``, for bare-id resolution and for
    the closest-id suggestions of an unknown id.

    Example::

        @hub.hookimpl
        def hub_namespaces():
            return [hub.Namespace("toy", make=make_toy_env, list_envs=toy_ids, requires=("toylib",))]
    """


@hookspec
def hub_spec_conversions() -> list[SpecConversion]:
    """Return converters from foreign space or spec types to hub specs, as
    :class:`hub.SpecConversion` objects.

    Called once per process, with the other hooks. Each conversion is keyed by the dotted path of
    the foreign class as a string (``"gymnasium.spaces.Box"``), so declaring it imports nothing;
    :func:`hub.convert_spec` matches it against the class of the object it converts and its base
    classes. ``convert(obj, **kwargs)`` returns a hub spec and may call :func:`hub.convert_spec`
    for children.

    Example::

        @hub.hookimpl
        def hub_spec_conversions():
            return [hub.SpecConversion("toylib.spaces.Box", convert=box_to_bounded)]
    """


@hookspec
def hub_backends() -> list[BackendFamily]:
    """Return backend families, as :class:`hub.BackendFamily` objects, for version dispatch.

    A family is a set of interchangeable libraries (``"gym"`` with candidates ``gymnasium`` and
    ``gym``) among which :func:`hub.set_backend` chooses the active one and on which
    :func:`hub.implement_for` dispatches. Called once per process, with the other hooks, and also
    when :mod:`hub.dispatch` is asked for a family it does not know yet; hub registers each family
    with :func:`hub.dispatch.register_backend_family`.

    Example::

        @hub.hookimpl
        def hub_backends():
            return [hub.BackendFamily("toy", candidates=("toylib", "toylib_legacy"))]
    """


@hookspec
def hub_batching() -> list[BatchingStrategy]:
    """Return extra batching strategies, as :class:`hub.BatchingStrategy` objects.

    ``hub.make_env(uri, num_envs=N, batching=name)`` then calls ``strategy.make(create_env_fn,
    N)``. The names ``auto``, ``serial``, ``parallel`` and ``native`` belong to hub. Called once per
    process, with the other hooks.

    Example::

        @hub.hookimpl
        def hub_batching():
            return [hub.BatchingStrategy("ray", make=make_ray_vector_env)]
    """
