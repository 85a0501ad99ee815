"""docs/plugins.md stays accurate for authors: it names every subclass hook of the env base
classes that exists, and every foreign type the built-in plugins convert.

Issue 23: the page did not say that gymnasium and dm_env spaces are converted already, and
``GymLikeEnv``, ``EnvWrapper`` and ``_close`` were in no authoring doc.
"""

from __future__ import annotations

from pathlib import Path

import hub

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()

READERS = ["read_action", "read_obs", "read_reward", "read_done", "set_info_dict_reader"]


def test_every_hook_of_the_contract_exists_and_is_documented():
    from hub.envs.hook_table import subclass_contract

    for hook in subclass_contract():
        cls = getattr(hub, hook.owner)
        if hook.name != "_env":  # an attribute of the instances
            assert hasattr(cls, hook.name), f"{hook.owner}.{hook.name} is gone"
        assert f"`{hook.name}`" in PAGE, f"docs/plugins.md does not name {hook.name}"
    for name in ("`hub.EnvBase`", "`hub.EnvWrapper`", "`hub.GymLikeEnv`"):
        assert name in PAGE


def test_every_reader_of_gym_like_env_exists_and_is_documented():
    for reader in READERS:
        assert hasattr(hub.GymLikeEnv, reader)
        assert f"`{reader}" in PAGE


def test_every_builtin_conversion_is_in_the_table():
    from hub_dm_control.plugin import SPEC_CONVERTERS
    from hub_gym.plugin import SPACE_CONVERTERS

    for name in SPACE_CONVERTERS:
        assert f"`{name}`" in PAGE or f"spaces.{name}`" in PAGE, name
    for name in SPEC_CONVERTERS:
        assert f"`dm_env.specs.{name}`" in PAGE, name
    for keyword in ("batch_size=", "device=", "categorical_action_encoding="):
        assert f"`{keyword}" in PAGE


def test_the_page_covers_the_kit_the_scaffold_and_the_conflicts():
    for heading in (
        "## Start from the scaffold",
        "## Testing a plugin",
        "## Conflicts and diagnostics",
        "### What is converted already",
        "### Converter keyword conventions",
    ):
        assert heading in PAGE
    for case in ("strict_load", "lazy_import", "dispatch", "partial_reset", "pickle"):
        assert f"`{case}" in PAGE
