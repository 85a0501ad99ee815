"""``import hub`` stays light: no backend library, no plugin, until an env needs one."""

from __future__ import annotations

import json
import subprocess
import sys

BACKENDS = ["gym", "gymnasium", "envpool", "dm_control", "dm_env", "mujoco", "ale_py", "ray"]


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_import_hub_imports_no_backend():
    loaded = _modules_after("import hub")
    assert not [m for m in BACKENDS if m in loaded]
    assert "hub_gym" not in loaded and "torch" not in loaded


def test_builtin_env_and_listing_import_no_backend():
    loaded = _modules_after(
        "import hub\nhub.make_env('hub:Pendulum').rollout(2)\nhub.list_plugins()\n"
        "hub.list_envs('hub')"
    )
    assert not [m for m in BACKENDS if m in loaded]
