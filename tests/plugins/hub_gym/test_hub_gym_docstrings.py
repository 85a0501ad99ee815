"""The examples in hub_gym's docstrings run (they use gymnasium)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from tests.plugins.hub_gym.gym_helpers import BACKENDS

pytestmark = pytest.mark.skipif(
    "gymnasium" not in BACKENDS, reason="the examples use gymnasium, which is not installed"
)


def _modules() -> list[str]:
    import hub_gym

    return ["hub_gym"] + [m.name for m in pkgutil.walk_packages(hub_gym.__path__, "hub_gym.")]


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
