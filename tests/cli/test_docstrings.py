"""The examples in the docstrings of ``hub.cli`` run as doctests.

``tests/test_docs.py`` runs those of the rest of hub; it leaves the CLI's submodules to this file.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hub.cli

from .conftest import require

MODULES = sorted(
    info.name for info in pkgutil.iter_modules(hub.cli.__path__, "hub.cli.") if not info.ispkg
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    require("hub.registry", "hub.envs")
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
