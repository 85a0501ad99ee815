"""The ``Example:`` blocks of every module of ``hub.transforms`` run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hub.transforms

MODULES = ["hub.transforms"] + [
    f"hub.transforms.{info.name}" for info in pkgutil.iter_modules(hub.transforms.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=True)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
