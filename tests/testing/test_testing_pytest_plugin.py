"""The kit's pytest plugin: declared under ``pytest11``, and usable through its marker."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULE = "hub.testing.pytest_plugin"


def test_the_pytest11_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text()  # tomllib needs Python 3.11
    section = text.split("[project.entry-points.pytest11]\n", 1)[1].split("\n[", 1)[0]
    entries = [line for line in section.splitlines() if line and not line.startswith("#")]
    assert entries == [f'"{MODULE}" = "{MODULE}"']


def test_importing_the_pytest_plugin_stays_light():
    code = f"import sys, {MODULE}; print(sorted({{'torch', 'tensordict'}} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


TESTS = """
import pytest

@pytest.mark.hub_conformance("hub", envs=["hub:Counting"], checks=["strict_load", "specs", "close"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()

def test_whole_plugin(hub_conformance):
    assert sorted(hub_conformance("hub", envs=["hub:Pendulum"], checks=["seeding"])) == [
        "seeding-hub:Pendulum"
    ]

def test_case_without_marker(hub_conformance_case):
    pass
"""


def test_the_marker_makes_one_test_per_case(tmp_path):
    (tmp_path / "test_kit.py").write_text(textwrap.dedent(TESTS))
    command = [sys.executable, "-m", "pytest", "-p", MODULE, "-p", "no:cacheprovider", "-v"]
    command.append(f"--junitxml={tmp_path / 'report.xml'}")
    result = subprocess.run(
        [*command, str(tmp_path / "test_kit.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    out = result.stdout
    for case in ("strict_load", "specs-hub:Counting", "close-hub:Counting"):
        assert f"test_conformance[{case}] PASSED" in out, out
    assert "test_whole_plugin PASSED" in out, out
    assert "has no @pytest.mark.hub_conformance('your-plugin') marker" in out + result.stderr
    assert '<property name="strict_load"' in (tmp_path / "report.xml").read_text()  # measured
