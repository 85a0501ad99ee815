"""The examples in hub_jax's docstrings run (they use gymnax and Brax)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip("gymnax")
pytest.importorskip("brax")
pytest.importorskip("craftax")


def _modules() -> list[str]:
    import hub_jax

    return ["hub_jax"] + [m.name for m in pkgutil.walk_packages(hub_jax.__path__, "hub_jax.")]


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
