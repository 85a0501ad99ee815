"""The examples of docs/specs.md and of the hub.specs docstrings run as doctests."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "specs.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MODULES = [
    "hub.specs",
    "hub.specs._shapes",
    "hub.specs._tensors",
    "hub.specs.base",
    "hub.specs.unbounded",
    "hub.specs.bounded",
    "hub.specs.categorical",
    "hub.specs.one_hot",
    "hub.specs.binary",
    "hub.specs.multi",
    "hub.specs.composite",
    "hub.specs.non_tensor",
]


def test_docs_page():
    text = "\n".join(b for b in FENCE.findall(PAGE.read_text()) if ">>>" in b)
    test = doctest.DocTestParser().get_doctest(text, {}, PAGE.name, str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 40 and result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS, verbose=False)
    assert result.attempted > 0 and result.failed == 0
