"""docs/compatibility.md is generated from the code and tox.ini; hub doctor checks the ranges."""

from __future__ import annotations

import gc
from pathlib import Path
from types import SimpleNamespace

import pytest

import hub
from hub.cli.compatibility import (
    compatibility_markdown,
    replace_generated,
    supported_ranges,
    version_problems,
)
from hub.cli.compatibility import (
    main as compatibility_main,
)

from .conftest import json_of

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "compatibility.md"
TOX_INI = ROOT / "tox.ini"


def test_the_page_is_up_to_date() -> None:
    args = ["--tox-ini", str(TOX_INI), "--check", str(PAGE)]
    assert compatibility_main(args) == 0, (
        "docs/compatibility.md is out of date: run "
        "python -m hub.cli.compatibility --write docs/compatibility.md"
    )


def test_a_new_dispatched_function_makes_the_page_out_of_date() -> None:
    def probe() -> str:
        """A difference the page does not list yet."""
        return "new"

    probe.__module__ = "hub_gym.compat.probe"
    probe.__qualname__ = "probe"
    dispatcher = hub.implement_for("gymnasium")(probe)
    try:
        generated = compatibility_markdown(TOX_INI)
        assert "hub_gym.compat.probe.probe" in generated
        page = PAGE.read_text()
        assert replace_generated(page, generated) != page
    finally:
        del dispatcher
        gc.collect()
    assert "hub_gym.compat.probe.probe" not in compatibility_markdown(TOX_INI)


def test_every_tox_env_and_backend_range_is_listed() -> None:
    page = PAGE.read_text()
    for env in (
        "gym021",
        "gymnasium027",
        "gymnasium028",
        "gymnasium11",
        "gymnasium13",
        "envpool10",
    ):
        assert f"| `{env}` |" in page
    for dist in ("gymnasium", "gym", "envpool", "dm-control", "mujoco"):
        assert f"| {dist} |" in page


def test_a_version_outside_the_range_is_a_problem() -> None:
    toy = SimpleNamespace(supported={"packaging": "<1"})
    rows = supported_ranges({"toy": toy})
    assert rows[0]["ok"] is False and rows[0]["installed"]
    (problem,) = version_problems(rows)
    assert "packaging" in problem and "'toy'" in problem and "<1" in problem
    inside = supported_ranges({"toy": SimpleNamespace(supported={"packaging": ">=1"})})
    assert version_problems(inside) == []
    missing = supported_ranges({"toy": SimpleNamespace(supported={"not-a-dist-xyz": ">=1"})})
    assert missing[0]["ok"] is None and version_problems(missing) == []


def test_doctor_lists_the_supported_versions(invoke) -> None:
    report = json_of(invoke("doctor", "--json"))
    dists = {row["distribution"] for row in report["versions"]}
    assert {"gymnasium", "envpool", "dm-control"} <= dists
    assert all(row["ok"] is not False for row in report["versions"])


def test_a_namespace_refuses_a_bad_range() -> None:
    with pytest.raises(ValueError, match="PEP 440"):
        hub.Namespace("toy", make=lambda env_id: None, supported={"toylib": "about 1.0"})
