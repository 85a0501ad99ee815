"""CI's slice of the version matrix (``make tox-slice``): every tox environment comes round in
the rotation, and the fixed part holds the version where the last break went unseen."""

from __future__ import annotations

import configparser
import os
import re
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _envlist() -> list[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "tox.ini")
    return config["tox"]["envlist"].split()


def _make_var(name: str) -> str:
    match = re.search(rf"^{name} \?= (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert match, f"{name} is not set in the Makefile"
    return match.group(1).strip()


def _slice(fake_tox: Path, fixed: str, rotate: str, turn: int) -> list[str]:
    out = subprocess.run(
        [str(ROOT / ".ci" / "tox-slice"), str(fake_tox), fixed, rotate],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TOX_ROTATION": str(turn)},
    )
    return out.stdout.strip().split(",")


def test_the_rotation_covers_the_whole_matrix(tmp_path):
    envs = _envlist()
    fake_tox = tmp_path / "tox"  # `tox -l` without creating anything
    fake_tox.write_text("#!/bin/sh\nprintf '%s\\n' " + " ".join(envs) + "\n")
    fake_tox.chmod(fake_tox.stat().st_mode | stat.S_IEXEC)
    fixed, rotate = _make_var("TOX_FIXED"), _make_var("TOX_ROTATE")
    assert set(fixed.split(",")) <= set(envs)
    assert "gymnasium11" in fixed.split(",")  # its red export went unseen by CI
    others = len(envs) - len(fixed.split(","))
    turns = -(-others // int(rotate))
    seen: set[str] = set()
    for turn in range(turns):
        chosen = _slice(fake_tox, fixed, rotate, turn)
        assert chosen[: len(fixed.split(","))] == fixed.split(",")
        assert len(chosen) == len(fixed.split(",")) + min(int(rotate), others - turn * int(rotate))
        seen |= set(chosen)
    assert seen == set(envs)
    assert _slice(fake_tox, fixed, rotate, turns) == _slice(fake_tox, fixed, rotate, 0)
