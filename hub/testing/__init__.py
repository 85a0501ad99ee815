"""hub's conformance kit for plugin authors: check a plugin as hub uses it.

``check_plugin(name)`` loads the plugin strictly and alone, checks in a fresh interpreter that
loading it imports no backend (and times it), resolves its version-dispatched functions, and
over its envs (``list_envs()`` or a sample) checks specs, seeding, serial, parallel and native
batching, partial resets, ``close`` and the pickling of the env factory. The pytest plugin
(registered under the ``pytest11`` entry point, so pytest finds it once hub is installed)
makes one test per check:

.. code-block:: python

    import pytest

    @pytest.mark.hub_conformance("example", envs=["example:Chain-v0"])
    def test_conformance(hub_conformance_case):
        hub_conformance_case.run()

Nothing in hub imports this package.

Example:
    >>> from hub.testing import check_plugin
    >>> sorted(check_plugin("hub", envs=["hub:Counting"], checks=["seeding"]))
    ['seeding-hub:Counting']
"""

from __future__ import annotations

from hub.testing.cases import (
    ENV_CHECK_NAMES,
    PLUGIN_CHECKS,
    ConformanceCase,
    check_plugin,
    conformance_cases,
)
from hub.testing.errors import ConformanceError
from hub.testing.isolation import isolated_plugin

__all__ = [
    "ENV_CHECK_NAMES",
    "PLUGIN_CHECKS",
    "ConformanceCase",
    "ConformanceError",
    "check_env",
    "check_plugin",
    "conformance_cases",
    "isolated_plugin",
]


def check_env(uri: str, checks: list[str] | None = None, **make_kwargs: object) -> None:
    """Run the env checks (default all but ``native``) on one env, without plugin isolation.

    For envs built in memory or while developing; ``check_plugin`` is the full kit.

    Example:
        >>> check_env("hub:Counting", checks=["specs", "close"])
    """
    from hub.testing.env_checks import ENV_CHECKS

    for name in checks or [c for c in ENV_CHECK_NAMES if c != "native"]:
        ENV_CHECKS[name](uri, **make_kwargs)
