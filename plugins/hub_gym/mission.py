"""MiniGrid's ``MissionSpace`` (the text of an episode's mission) -> a ``NonTensor`` spec.

MiniGrid observes ``{"image", "direction", "mission"}``; its mission is a string drawn from a
``minigrid.core.mission.MissionSpace``, a gymnasium ``Space`` of its own (not a ``Text``). hub
holds the string as non-tensor data, as it holds a ``Text`` space's.

Example (a stand-in with the two attributes read, for a ``MissionSpace``):
    >>> from types import SimpleNamespace
    >>> space = SimpleNamespace(mission_func=lambda: "get to the green goal", ordered_placeholders=None)
    >>> mission_to_spec(space, batch_size=(2,))
    NonTensor(shape=[2], example_data='get to the green goal')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hub.specs import NonTensor

__all__ = ["MISSION_SPACE", "mission_to_spec"]

#: the dotted name the conversion is registered under
MISSION_SPACE = "minigrid.core.mission.MissionSpace"


def mission_to_spec(
    space: Any,
    *,
    batch_size: Sequence[int] = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> NonTensor:
    """``MissionSpace`` -> ``NonTensor`` of the batch shape, with a mission as example data (the
    mission of a space whose mission function takes no argument, else ``""``)."""
    example = ""
    if not getattr(space, "ordered_placeholders", None):
        try:
            example = str(space.mission_func())
        except Exception:  # noqa: BLE001 - a mission function that needs arguments
            example = ""
    return NonTensor(shape=tuple(batch_size), device=device, example_data=example)
