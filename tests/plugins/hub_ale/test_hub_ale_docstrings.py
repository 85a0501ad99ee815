"""The examples in hub_ale's docstrings run (they use ale-py)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    import hub_ale

    return ["hub_ale"] + [m.name for m in pkgutil.walk_packages(hub_ale.__path__, "hub_ale.")]


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
