"""One lazy-export mechanism (``hub.lazy``) for every package and plugin, and every subpackage
of hub reachable as ``hub.<name>`` without importing it first."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import hub
from hub.lazy import declared_exports

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["gym", "gymnasium", "envpool", "dm_control", "dm_env", "mujoco", "ale_py", "ray"]
#: the conformance kit: nothing in hub imports it, not even lazily (``import hub.testing``)
NOT_REACHABLE = {"testing"}
#: packages whose names still load through a loader of their own
HAND_WRITTEN: set[str] = set()


def _subpackages() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(hub.__path__) if m.ispkg)


def _run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_every_subpackage_is_an_attribute_of_hub_without_an_import():
    """``import hub; hub.export.to_torchrl`` and ``hub.external`` work in a fresh interpreter,
    and reaching every subpackage this way imports no backend library."""
    names = [n for n in _subpackages() if n not in NOT_REACHABLE]
    assert {"export", "external", "media", "batching", "transforms"} <= set(names)
    code = (
        "import json, sys\nimport hub\n"
        "found = {}\n"
        f"for name in {names!r}:\n"
        "    found[name] = getattr(hub, name).__name__\n"
        "found['to_torchrl'] = hub.export.to_torchrl.__name__\n"
        "found['ExternalEnv'] = hub.external.ExternalEnv.__name__\n"
        "found['loaded'] = sorted(sys.modules)\n"
        "print(json.dumps(found))\n"
    )
    found = _run(code)
    assert {n: found[n] for n in names} == {n: f"hub.{n}" for n in names}
    assert found["to_torchrl"] == "to_torchrl" and found["ExternalEnv"] == "ExternalEnv"
    assert [m for m in BACKENDS if m in found["loaded"]] == []
    assert "hub.testing" not in found["loaded"]


def test_import_hub_imports_no_subpackage_until_asked():
    loaded = _run("import json, sys\nimport hub\nprint(json.dumps(sorted(sys.modules)))")
    assert [m for m in loaded if m.startswith("hub.") and m != "hub.lazy"] == []


def _lazy_packages() -> list[str]:
    """Every package of hub and of the built-in plugins whose ``__init__`` uses hub.lazy."""
    found = []
    for init in sorted([*ROOT.glob("hub/**/__init__.py"), *ROOT.glob("plugins/hub_*/__init__.py")]):
        if "lazy_exports(" in init.read_text():
            parts = init.relative_to(ROOT).parent.parts
            found.append(".".join(parts[1:] if parts[0] == "plugins" else parts))
    return found


@pytest.mark.parametrize("package", _lazy_packages())
def test_a_lazy_package_declares_its_names_once(package):
    """``__all__``, ``dir()`` and what loads come from the TYPE_CHECKING block, read by type
    checkers too; nothing the package imports for itself shows."""
    module = importlib.import_module(package)
    declared = declared_exports(Path(module.__file__).read_text(), package)
    assert module.__all__ == sorted(declared)
    assert [n for n in dir(module) if not n.startswith("__")] == module.__all__
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_the_packages_use_one_lazy_mechanism():
    """No package or built-in plugin writes a module ``__getattr__`` of its own: each declares
    its names for ``hub.lazy``."""
    assert {"hub", "hub.plugins", "hub_ray", "hub_gym"} <= set(_lazy_packages())
    own = []
    for init in sorted([*ROOT.glob("hub/**/__init__.py"), *ROOT.glob("plugins/hub_*/__init__.py")]):
        tree = ast.parse(init.read_text())
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
            own.append(str(init.relative_to(ROOT)))
    assert sorted(own) == sorted(HAND_WRITTEN), (
        "a package writes its own __getattr__; declare its names for hub.lazy instead (or, "
        "once a package listed in HAND_WRITTEN uses hub.lazy, remove it from the list)"
    )
