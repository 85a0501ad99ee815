"""The pytest plugin of hub's conformance kit (entry point ``pytest11``, loaded by pytest).

It adds the marker ``hub_conformance(plugin, envs=None, checks=None, make_kwargs=None,
forbidden=None)`` and two fixtures:

* ``hub_conformance_case``: a test that asks for it and carries the marker runs once per
  conformance case (``strict_load``, ``lazy_import``, ``dispatch``, then each env check for each
  env); ``hub_conformance_case.run()`` runs it, returns what it measured and records it in the
  test's ``user_properties``;
* ``hub_conformance``: ``check_plugin`` itself, for one test that runs every case; what each
  case measured (load times...) goes to the test's ``user_properties``.

Importing this module imports neither torch nor any plugin: pytest imports it at start-up.

Example:
    >>> import hub.testing.pytest_plugin as plugin
    >>> plugin.MARKER
    'hub_conformance'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["MARKER", "hub_conformance", "hub_conformance_case"]

MARKER = "hub_conformance"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(plugin, envs=None, checks=None, make_kwargs=None, forbidden=None): run "
        f"hub's plugin conformance checks, one test per case, through the "
        f"hub_conformance_case fixture",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hub_conformance_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        return  # the fixture fails this test alone, saying what is missing
    from hub.testing.cases import conformance_cases

    cases = conformance_cases(*marker.args, **marker.kwargs)
    ids = [case.id for case in cases]
    metafunc.parametrize("hub_conformance_case", cases, ids=ids, indirect=True)


@pytest.fixture
def hub_conformance_case(request: pytest.FixtureRequest) -> Any:
    """One conformance case (parametrised by the ``hub_conformance`` marker)."""
    if not hasattr(request, "param"):
        pytest.fail(
            f"{request.node.nodeid} asks for hub_conformance_case but has no "
            f"@pytest.mark.{MARKER}('your-plugin') marker naming the plugin to check",
            pytrace=False,
        )
    return _RecordedCase(request.param, request.node)


class _RecordedCase:
    """A case whose ``run()`` records what it measured (load times...) in the test's
    ``user_properties`` (shown by ``--junitxml`` and reporting plugins)."""

    def __init__(self, case: Any, node: Any) -> None:
        self.case = case
        self._node = node

    def run(self) -> Any:
        measured = self.case.run()
        if measured is not None:
            self._node.user_properties.append((self.case.id, measured))
        return measured

    def __getattr__(self, name: str) -> Any:
        return getattr(self.case, name)

    def __repr__(self) -> str:
        return repr(self.case)


@pytest.fixture
def hub_conformance(request: pytest.FixtureRequest) -> Callable[..., dict[str, Any]]:
    """``check_plugin``, recording what each case measured in the test's user properties."""
    from hub.testing.cases import check_plugin

    def run(plugin: str, **kwargs: Any) -> dict[str, Any]:
        report = check_plugin(plugin, **kwargs)
        for case_id, measured in report.items():
            if measured is not None:
                request.node.user_properties.append((case_id, measured))
        return report

    return run
