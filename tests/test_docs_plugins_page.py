"""docs/plugins.md stays accurate for authors: it names every subclass hook of the env base
classes that exists, and every foreign type the built-in plugins convert.

Issue 23: the page did not say that gymnasium and dm_env spaces are converted already, and
``GymLikeEnv``, ``EnvWrapper`` and ``_close`` were in no authoring doc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hub

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()

HOOKS = {
    "EnvBase": [
        "_reset",
        "_step",
        "_set_seed",
        "_close",
        "_step_into",
        "_reset_finished",
        "_plain_step_ok",
        "_check_actions",
        "masks_partial_resets",
        "batch_locked",
    ],
    "EnvWrapper": ["_check_kwargs", "_build_env", "_make_specs", "_init_env", "_close"],
    "GymLikeEnv": [
        "read_action",
        "read_obs",
        "read_reward",
        "read_done",
        "_output_transform",
        "_reset_output_transform",
        "set_info_dict_reader",
    ],
}


@pytest.mark.parametrize("cls_name", sorted(HOOKS))
def test_every_documented_hook_exists_and_is_documented(cls_name):
    cls = getattr(hub, cls_name)
    assert f"`hub.{cls_name}`" in PAGE
    for hook in HOOKS[cls_name]:
        assert hasattr(cls, hook), f"docs/plugins.md documents {cls_name}.{hook}, which is gone"
        assert f"`{hook}" in PAGE, f"docs/plugins.md does not name {cls_name}.{hook}"


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
