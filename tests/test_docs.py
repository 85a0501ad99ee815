"""The examples of docs/*.md and of hub's docstrings run as doctests.

In Markdown, every fenced ```python block holding ``>>>`` lines is an example; the blocks of one
page share their names, in page order.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import hub

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _page_examples(path: Path) -> str:
    blocks = [b for b in FENCE.findall(path.read_text()) if ">>>" in b]
    return "\n".join(blocks)


@pytest.mark.parametrize("page", [p for p in DOCS if ">>>" in p.read_text()], ids=lambda p: p.name)
def test_docs_page(page: Path) -> None:
    text = _page_examples(page)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"__name__": page.stem}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of {page.name} failed (output above)"


def _hub_modules() -> list[str]:
    names = ["hub"]
    for info in pkgutil.walk_packages(hub.__path__, "hub."):
        if ".cli" in info.name and info.name.count(".") > 1:
            continue
        names.append(info.name)
    return names


OPTIONAL = {"gym", "gymnasium", "envpool", "dm_control", "dm_env", "mujoco", "imageio"}


@pytest.mark.parametrize("name", _hub_modules())
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}, which is not installed")
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
