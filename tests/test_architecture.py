"""The architecture as a check: the import contracts of pyproject.toml (import-linter), and what
they cannot see: ``import_module`` strings, private names and EnvBase's subclass contract."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hub
from hub.envs.hook_table import contract_names, markdown_table

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PACKAGES = ("hub_builtin", "hub_gym", "hub_envpool", "hub_dm_control", "hub_ray")
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"
ALLOWED = contract_names()  # the underscore names of EnvBase's subclass contract


def lint_imports(*paths: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the repo's contracts, on the packages found under ``paths``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}
    return subprocess.run(
        [sys.executable, "-c", LINT, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=paths[0],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def plugin_files() -> list[Path]:
    return python_files(
        *(f"plugins/{name}" for name in PLUGIN_PACKAGES), "plugins/hub-plugin-example/src"
    )


def test_the_import_contracts_hold_on_the_tree():
    result = lint_imports(ROOT, ROOT / "plugins")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_contracts_fail_on_wrong_imports(tmp_path):
    """A copy of the tree with one wrong import per contract: each contract reports it."""
    ignore = shutil.ignore_patterns("__pycache__", "*.md", "build", "*.egg-info")
    shutil.copytree(ROOT / "hub", tmp_path / "hub", ignore=ignore)
    for name in PLUGIN_PACKAGES:
        shutil.copytree(ROOT / "plugins" / name, tmp_path / "plugins" / name, ignore=ignore)

    def add(path: str, line: str) -> None:
        with open(tmp_path / path, "a") as f:
            f.write(f"\n{line}\n")

    add("hub/specs/base.py", "import hub.envs.base  # a lower layer reaching up")
    add("hub/dispatch/backends.py", "from hub.plugins import ensure_plugins_loaded")
    add("plugins/hub_gym/env.py", "from hub.envs import _fast_td  # a private module")
    add("hub/batching/live_pools.py", "from hub.batching import pool  # a cycle")
    add("plugins/hub_envpool/specs.py", "import hub_gym.spaces  # one plugin on another")
    (tmp_path / "hub" / "testing").mkdir(exist_ok=True)
    add("hub/testing/__init__.py", "")
    add("hub/testing/kit.py", "")
    add("hub/registry/make.py", "import hub.testing.kit  # the kit is above everything")
    result = lint_imports(tmp_path, tmp_path / "plugins")
    out = result.stdout
    assert result.returncode != 0, out
    assert "Contracts: 0 kept, 5 broken." in out, out
    assert "hub.specs.base -> hub.envs.base" in out
    assert "hub.dispatch.backends -> hub.plugins" in out
    assert "hub_gym.env -> hub.envs._fast_td" in out
    assert ".live_pools -> .pool" in out
    assert "hub_envpool.specs -> hub_gym.spaces" in out
    assert "hub.registry.make -> hub.testing.kit" in out


def _string_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """``importlib.import_module("x")`` and ``__import__("x")`` calls with a literal name."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        arg = node.args[0]
        if name in ("import_module", "__import__") and isinstance(arg, ast.Constant):
            found.append((node.lineno, str(arg.value)))
    return found


def test_no_module_imports_hub_through_a_string():
    """An import hidden in a string escapes the contracts: none of hub's own modules is
    imported that way (the lazy public names of hub/__init__.py name them in a table)."""
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in python_files("hub", "plugins")
        for line, name in _string_imports(ast.parse(path.read_text()))
        if name == "hub" or name.startswith("hub.")
    ]
    assert bad == []


def _private_hub_names(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "hub":
            parts = node.module.split(".") + [a.name for a in node.names]
            found += [(node.lineno, node.module)] if _is_private(parts) else []
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if _is_private(a.name.split("."))]
        elif isinstance(node, ast.Attribute):
            chain = _attribute_chain(node)
            if chain and chain[0] == "hub" and _is_private(chain):
                found.append((node.lineno, ".".join(chain)))
    return found


def _is_private(parts: list[str]) -> bool:
    """A private hub name, other than a documented subclass hook (``hub.EnvBase._step``)."""
    if parts[-1] in ALLOWED:
        parts = parts[:-1]
    return parts[0] == "hub" and any(p.startswith("_") and not p.startswith("__") for p in parts)


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    parts = [node.attr]
    value = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    return [value.id, *reversed(parts)] if isinstance(value, ast.Name) else None


def test_plugins_use_public_names_of_hub_only():
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in plugin_files()
        for line, name in _private_hub_names(ast.parse(path.read_text()))
    ]
    assert bad == []


def test_the_private_name_check_sees_a_private_import():
    tree = ast.parse("from hub.envs._fast_td import fast_get\nimport hub\nhub.envs.base._x\n")
    assert [line for line, _ in _private_hub_names(tree)] == [1, 3]


def _plugin_env_classes() -> list[type]:
    classes = []
    for package in PLUGIN_PACKAGES:
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, f"{package}."):
            try:
                module = importlib.import_module(info.name)
            except ModuleNotFoundError as err:  # its backend is not installed (tox envs)
                if (err.name or "").split(".")[0] in (*PLUGIN_PACKAGES, "hub"):
                    raise
                continue
            for obj in vars(module).values():
                if (
                    inspect.isclass(obj)
                    and issubclass(obj, hub.EnvBase)
                    and obj.__module__ == module.__name__
                ):
                    classes.append(obj)
    return classes


def _hub_internal_names(cls: type) -> set[str]:
    """The underscore names hub's classes in ``cls``'s MRO define (methods and attributes)."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("hub."):
            continue
        names |= {n for n in vars(base) if n.startswith("_") and not n.startswith("__")}
        tree = ast.parse(inspect.getsource(sys.modules[base.__module__]))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _on_self(node) and node.attr.startswith("_"):
                names.add(node.attr)
    return {n for n in names if not n.startswith("__")}


def _on_self(node: ast.Attribute) -> bool:
    value = node.value
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


@pytest.mark.parametrize("cls", _plugin_env_classes(), ids=lambda c: c.__qualname__)
def test_plugin_envs_keep_to_the_subclass_hooks(cls):
    """A plugin's env overrides only documented hooks and touches no other underscore name of
    hub's base classes (its own private names are free: none clashes with hub's)."""
    internal = _hub_internal_names(cls) - ALLOWED
    own = [c for c in cls.__mro__ if c.__module__.split(".")[0] in PLUGIN_PACKAGES]
    overridden = sorted({n for c in own for n in vars(c)} & internal)
    used = sorted(
        {
            f"{c.__qualname__}: self.{node.attr} (line {node.lineno})"
            for c in own
            for node in ast.walk(ast.parse(inspect.getsource(c)))
            if isinstance(node, ast.Attribute) and _on_self(node) and node.attr in internal
        }
    )
    assert overridden == [], f"overrides hub internals: {overridden}"
    assert used == [], f"uses hub internals: {used}"


def test_the_hook_check_sees_an_internal_override():
    class Leaky(hub.EnvBase):
        def _run_step(self, tensordict, keys, fused=False):
            pass

    assert "_run_step" in _hub_internal_names(Leaky) - ALLOWED


def test_the_plugin_guide_shows_the_contract_as_the_code_declares_it():
    """docs/plugins.md holds the table :func:`hub.envs.hook_table.markdown_table` renders from
    the hooks' declarations (``python -m hub.envs.hook_table`` prints it)."""
    guide = (ROOT / "docs" / "plugins.md").read_text()
    assert markdown_table() in guide


def _code_lines(*folders: str) -> list[tuple[Path, int, str]]:
    return [
        (path, number, line)
        for path in python_files(*folders)
        for number, line in enumerate(path.read_text().splitlines(), 1)
    ]


def test_no_backend_or_batched_env_writes_its_own_step_loop():
    """One step pipeline: ``EnvBase`` owns ``step_and_maybe_reset``; no plugin and no batched
    env defines it, and no code chooses a path by checking which methods a class overrides."""
    folders = ("plugins", "hub/batching")
    own = [
        f"{path.relative_to(ROOT)}:{n}"
        for path, n, line in _code_lines(*folders)
        if "def step_and_maybe_reset" in line
    ]
    assert own == []
    gates = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path, n, line in _code_lines("hub", "plugins")
        if "_plain_step_ok" in line
        or re.search(
            r"\b(step|_step|reset|_reset|step_mdp|_reset_finished) is \w*\.?EnvBase\.", line
        )
        or re.search(r"cls\.\w+ is hub\.EnvBase\.", line)
    ]
    assert gates == []


def test_nested_key_is_defined_once():
    definitions = [
        f"{path.relative_to(ROOT)}:{n}"
        for path, n, line in _code_lines("hub", "plugins")
        if re.match(r"\s*NestedKey\s*(:[^=]*)?=", line)
    ]
    assert definitions == ["hub/specs/keys.py:15"]


def test_the_public_api_is_declared_once():
    """``hub.__all__``, ``dir(hub)`` and the lazy loader all come from the TYPE_CHECKING imports
    of hub/__init__.py, which type checkers read; nothing hub imports for itself shows."""
    from hub.lazy import declared_exports

    declared = declared_exports((ROOT / "hub" / "__init__.py").read_text(), "hub")
    assert hub.__all__ == sorted(declared)
    assert [n for n in dir(hub) if not n.startswith("__")] == hub.__all__
    for name in hub.__all__:
        assert getattr(hub, name) is not None


def test_nothing_in_hub_imports_the_conformance_kit():
    """``hub.testing`` may use everything; no other module of hub imports it (the contract of
    pyproject.toml covers its submodules; this covers the package itself, whether or not it
    exists yet)."""
    bad = []
    for path in python_files("hub"):
        if "testing" in path.relative_to(ROOT / "hub").parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if any(n == "hub.testing" or n.startswith("hub.testing.") for n in names):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bad == []
