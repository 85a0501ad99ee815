"""The examples in hub_dm_control's docstrings run (with dm_control and EGL)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from tests.plugins.hub_dm_control.dmc_helpers import needs_dmc, needs_gl

pytestmark = [needs_dmc, needs_gl]


def _modules() -> list[str]:
    import hub_dm_control

    return ["hub_dm_control"] + [
        m.name for m in pkgutil.walk_packages(hub_dm_control.__path__, "hub_dm_control.")
    ]


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
