"""docs/design.md stays true to the tree: its module map lists every package and module of hub
and every plugin under plugins/, and nothing that does not exist; every path the page names
exists.

The map is the tables of the page's "## Module map" section. A row's first cell names what it
describes, in backticks: a module (``hub/envs/pipeline.py``), a package with a trailing slash
(``hub/envs/``, for its ``__init__.py``) or a plugin (``plugins/hub_gym/``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "design.md"
SECTION = "## Module map"
FIRST_CELL = re.compile(r"^\|\s*(.*?)\s*\|", re.MULTILINE)
CODE = re.compile(r"`([^`\n]+)`")
#: the folders of the repository whose paths the page may name
TREE_ROOTS = ("hub/", "plugins/", "tests/", "benchmarks/", "docs/", "examples/")
HOW_TO_FIX = (
    "docs/design.md's module map (the tables under '## Module map') must list every package "
    "and module of hub/ and every plugin under plugins/, and nothing else"
)


def _map_section(text: str) -> str:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else len(text)]


def mapped_paths(text: str) -> set[str]:
    """The paths named in the first cell of the module map's table rows.

    Example:
        >>> sorted(mapped_paths("## Module map\\n| module | holds |\\n|---|---|\\n"
        ...                     "| `hub/lazy.py` | lazy names |\\n## Next\\n| `hub/x.py` | no |"))
        ['hub/lazy.py']
    """
    paths = set()
    for cell in FIRST_CELL.findall(_map_section(text)):
        paths.update(CODE.findall(cell))
    return paths


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file()


def tree_paths(root: Path = ROOT) -> set[str]:
    """What the map must list: every package of ``hub/`` (``hub/envs/``) and every module but
    ``__init__.py`` files (``hub/envs/base.py``); every plugin under ``plugins/``: a package
    (``plugins/hub_gym/``) or a separate distribution (``plugins/hub-plugin-example/``)."""
    paths = set()
    hub = root / "hub"
    for path in hub.rglob("*"):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        if path.is_dir() and _is_package(path):
            paths.add(f"{relative}/")
        elif path.suffix == ".py" and path.name != "__init__.py" and _is_package(path.parent):
            paths.add(relative)
    paths.add("hub/")
    for folder in sorted((root / "plugins").iterdir()):
        if folder.is_dir() and (_is_package(folder) or (folder / "pyproject.toml").is_file()):
            paths.add(f"plugins/{folder.name}/")
    return paths


def test_every_module_is_in_the_module_map():
    missing = sorted(tree_paths() - mapped_paths(PAGE.read_text()))
    assert not missing, (
        f"{HOW_TO_FIX}; these exist but have no row: {', '.join(missing)}. Add a row "
        "'| `<path>` | what it holds |' for each, in the table of its package in docs/design.md."
    )


def test_the_module_map_lists_only_what_exists():
    stale = sorted(mapped_paths(PAGE.read_text()) - tree_paths())
    assert not stale, (
        f"{HOW_TO_FIX}; these rows name something that does not exist: {', '.join(stale)}. "
        "Rename or remove their rows in docs/design.md."
    )


def test_every_path_the_page_names_exists():
    named = {
        token.rstrip(".,:;")
        for token in CODE.findall(PAGE.read_text())
        if token.startswith(TREE_ROOTS) and " " not in token
    }
    gone = sorted(path for path in named if not (ROOT / path).exists())
    assert not gone, (
        f"docs/design.md names paths that do not exist: {', '.join(gone)}. Describe the code as "
        "it is now: point to the module that holds the thing, or drop the mention."
    )


def test_the_check_sees_a_missing_and_a_stale_row(tmp_path):
    """On a small tree: a module without a row is missing, a row without a module is stale."""
    for path in ("hub/__init__.py", "hub/envs/__init__.py", "hub/envs/base.py", "hub/lazy.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / "plugins" / "hub_toy").mkdir(parents=True)
    (tmp_path / "plugins" / "hub_toy" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "hub-plugin-x").mkdir()
    (tmp_path / "plugins" / "hub-plugin-x" / "pyproject.toml").write_text("")
    (tmp_path / "plugins" / "notes").mkdir()  # neither a package nor a distribution
    page = (
        "## Module map\n\n| module | holds |\n|---|---|\n| `hub/` | top |\n"
        "| `hub/envs/`, `hub/envs/base.py` | envs |\n| `hub/gone.py` | stale |\n"
        "| `plugins/hub_toy/` | toy |\n| `plugins/hub-plugin-x/` | x |\n"
    )
    expected = tree_paths(tmp_path)
    assert expected - mapped_paths(page) == {"hub/lazy.py"}
    assert mapped_paths(page) - expected == {"hub/gone.py"}
