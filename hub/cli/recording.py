"""What ``hub rollout --record`` keeps: the frames of a few envs of the batch, every k steps.

Each kept step stores the chosen envs' frames as the env gave them (small: e.g. 8 x 210 x 160 x 3
bytes for Pong), with the step and the envs' running returns; the picture a person watches
(:func:`hub.media.compose`: tiled, scaled up, captioned) is made from them only when the file
is written, one frame at a time.

Example:
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> frames = np.zeros((3, 8, 8, 3), np.uint8)
    >>> env = SimpleNamespace(batch_size=(3,), render_frames=lambda data: frames)
    >>> source = FrameSource.for_env(env, "fake:Env", observation_spec=None)
    >>> recording = TiledRecording(source, env_ids=[0, 2], every=2)
    >>> for step in range(5):
    ...     recording.add(step, {}, running_returns=[float(step)] * 3)
    >>> len(recording), recording[0].shape  # steps 0, 2 and 4; two 256 x 256 tiles
    (3, (304, 512, 3))
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hub.cli.errors import CliError
from hub.media.sources import FrameSource
from hub.media.tiles import compose

#: the most envs tiled in one recording
MAX_RECORD_ENVS = 8


def parse_record_envs(text: str | None, num_envs: int) -> list[int]:
    """The env indices to record from ``--record-envs``: a count ``N`` (the first N envs) or a
    comma-separated list of indices; default the first :data:`MAX_RECORD_ENVS`.

    Raises:
        CliError: the text is not a count or a list of indices of this batch, or names more than
            :data:`MAX_RECORD_ENVS` envs.

    Example:
        >>> parse_record_envs(None, 16), parse_record_envs("2", 16), parse_record_envs("0,5", 8)
        ([0, 1, 2, 3, 4, 5, 6, 7], [0, 1], [0, 5])
    """
    if text is None:
        return list(range(min(num_envs, MAX_RECORD_ENVS)))
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        values = [int(part) for part in parts]
    except ValueError:
        values = []
    if not values:
        raise CliError(
            f"--record-envs {text!r}: expected a count (e.g. 4: the first 4 envs) or env indices "
            "separated by commas (e.g. 0,3,5)."
        )
    if len(parts) == 1 and "," not in text:
        count = values[0]
        if not 1 <= count <= min(num_envs, MAX_RECORD_ENVS):
            raise CliError(
                f"--record-envs {count}: the batch has {num_envs} env(s) and at most "
                f"{MAX_RECORD_ENVS} are tiled; pass a count from 1 to "
                f"{min(num_envs, MAX_RECORD_ENVS)}."
            )
        return list(range(count))
    bad = [v for v in values if not 0 <= v < num_envs]
    if bad:
        raise CliError(
            f"--record-envs {text!r}: no env {bad[0]} in a batch of {num_envs} env(s); indices "
            f"go from 0 to {num_envs - 1}."
        )
    if len(values) > MAX_RECORD_ENVS:
        raise CliError(
            f"--record-envs {text!r}: {len(values)} envs, but at most {MAX_RECORD_ENVS} are "
            "tiled; name fewer."
        )
    return list(dict.fromkeys(values))


class TiledRecording(Sequence[np.ndarray]):
    """The kept steps of a rollout; as a sequence, their composed pictures (made on access).

    Args:
        source: where the frames come from.
        env_ids: the envs to tile (indices into the flattened batch).
        every: keep one step in ``every`` (the reset, step 0, is always kept).
        title: written on top of each picture, before the step.
    """

    def __init__(
        self,
        source: FrameSource,
        env_ids: Sequence[int],
        *,
        every: int = 1,
        title: str = "",
    ) -> None:
        self.source = source
        self.env_ids = list(env_ids)
        self.every = max(1, int(every))
        self.title = title
        self._steps: list[int] = []
        self._frames: list[list[np.ndarray]] = []
        self._returns: list[list[float]] = []

    def add(self, step: int, data: Any, running_returns: Sequence[float]) -> None:
        """Keep step ``step`` (when it is one in :attr:`every`), given the env's data after it."""
        if step % self.every:
            return
        frames = [np.array(frame) for frame in self.source.grab_envs(data, self.env_ids)]
        ids = self.env_ids[: len(frames)]  # a source of one image per batch gives one frame
        self._steps.append(step)
        self._frames.append(frames)
        self._returns.append([float(running_returns[i]) for i in ids])

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, index: int) -> np.ndarray:  # type: ignore[override]
        frames = self._frames[index]
        return compose(
            frames,
            env_ids=self.env_ids[: len(frames)],
            returns=self._returns[index],
            step=self._steps[index],
            title=self.title,
        )

    def __iter__(self) -> Iterator[np.ndarray]:
        for index in range(len(self)):
            yield self[index]
