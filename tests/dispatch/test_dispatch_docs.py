"""The examples of docs/dispatch.md and of the hub.dispatch docstrings run as doctests."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from hub.dispatch import is_installed

DOC = Path(__file__).resolve().parents[2] / "docs" / "dispatch.md"
FLAGS = doctest.ELLIPSIS


@pytest.mark.skipif(not is_installed("gymnasium"), reason="the page uses gymnasium")
def test_docs_page():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=FLAGS, verbose=False)
    assert result.attempted > 30 and result.failed == 0


@pytest.mark.parametrize(
    "module",
    [
        "hub.dispatch",
        "hub.dispatch.versions",
        "hub.dispatch.backends",
        "hub.dispatch.implement_for",
    ],
)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=FLAGS, verbose=False)
    assert result.attempted > 0 and result.failed == 0
