"""The rollout progress bar (rich.progress on stderr), off for ``--json`` and non-terminals.

Example:
    >>> with rollout_progress("hub:Counting", 10, enabled=False) as on_progress:
    ...     on_progress is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

ProgressCallback = Callable[[int, int], None]


@contextmanager
def rollout_progress(
    uri: str, steps: int, *, enabled: bool, num_envs: int = 1
) -> Iterator[ProgressCallback | None]:
    """A live bar of batch steps, env-steps per second and finished episodes.

    Yields the bar's update callback, which takes ``(steps_done, episodes)``. When ``enabled`` is false nothing is
    drawn and ``None`` is yielded, so the rollout loop skips the calls altogether.
    """
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from hub.cli.output import console

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} env-steps/s"),
        TextColumn("{task.fields[episodes]} episodes"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    # 4 redraws a second: live enough, and the drawing thread takes little from the env's
    with Progress(*columns, console=console(stderr=True), refresh_per_second=4) as progress:
        task = progress.add_task(uri, total=steps, episodes=0, rate="-")

        def on_progress(done: int, episodes: int) -> None:
            elapsed = progress.tasks[task].elapsed or 0.0
            rate = f"{done * num_envs / elapsed:,.0f}" if elapsed > 0 else "-"
            progress.update(task, completed=done, episodes=episodes, rate=rate)

        yield on_progress
