"""What ``hub rollout --record`` keeps (``hub.cli.recording``): the chosen envs, their frames
and running returns. The pictures and files are ``hub.media``'s (tests/media)."""

from __future__ import annotations

import numpy as np
import pytest

from hub.cli.errors import CliError
from hub.cli.recording import MAX_RECORD_ENVS, parse_record_envs
from hub.media.tiles import BAR_HEIGHT

pytest.importorskip("PIL", reason="--record needs Pillow (the 'all' extra)")


def test_parse_record_envs():
    assert parse_record_envs(None, 3) == [0, 1, 2]
    assert parse_record_envs(None, 64) == list(range(MAX_RECORD_ENVS))
    assert parse_record_envs("4", 64) == [0, 1, 2, 3]
    assert parse_record_envs("7, 2,7", 8) == [7, 2]
    for text, num_envs, message in [
        ("0", 16, "a count from 1 to 8"),
        ("9", 16, "a count from 1 to 8"),
        ("3", 2, "a count from 1 to 2"),
        ("1,9", 8, "no env 9 in a batch of 8"),
        ("a,b", 8, "expected a count"),
        (",".join(map(str, range(9))), 16, "at most 8"),
    ]:
        with pytest.raises(CliError, match=message):
            parse_record_envs(text, num_envs)


def test_recording_keeps_the_running_returns_of_the_chosen_envs():
    from types import SimpleNamespace

    import torch

    from hub.cli.episodes import EpisodeTracker
    from hub.cli.recording import TiledRecording
    from hub.media import FrameSource

    frames = np.zeros((3, 8, 8, 3), np.uint8)
    env = SimpleNamespace(batch_size=(3,), render_frames=lambda data: frames)
    recording = TiledRecording(FrameSource.for_env(env, "fake:Env", None), [2, 0], every=2)
    tracker = EpisodeTracker(3)
    recording.add(0, None, tracker.running_returns)
    for step in range(1, 5):
        tracker.update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([False, False, step == 4]))
        recording.add(step, None, tracker.running_returns)
    assert len(recording) == 3  # steps 0, 2, 4
    assert recording._returns == [[0.0, 0.0], [6.0, 2.0], [12.0, 4.0]]  # env 2 ends at step 4
    assert recording[2].shape == (BAR_HEIGHT + BAR_HEIGHT + 256, 2 * 256, 3)
