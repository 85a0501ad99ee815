"""``docs/cli.md`` describes the command line as it is: every command in its table, under its
own heading, and the number of commands in words."""

from __future__ import annotations

import re
from pathlib import Path

from hub.cli import cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def test_the_page_lists_and_describes_every_command():
    text = PAGE.read_text()
    commands = sorted(cli.commands)
    in_table = sorted(set(re.findall(r"^\| `hub ([\w-]+)", text, re.MULTILINE)))
    headed = sorted(set(re.findall(r"^## `hub ([\w-]+)", text, re.MULTILINE)))
    assert in_table == commands
    assert headed == commands
    assert f"{NUMBERS[len(commands)].capitalize()} commands:" in text
