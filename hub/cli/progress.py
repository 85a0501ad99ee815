"""The rollout progress bar (rich.progress on stderr), off for ``--json`` and non-terminals.

The figures (steps, env-steps/s, episodes, times) are never cut: on a narrow terminal (80
columns) the bar shrinks, and the URI moves to its own line above the bar when the line has no
room for it.

Example:
    >>> with rollout_progress("hub:Counting", 10, enabled=False) as on_progress:
    ...     on_progress is None
    True
    >>> bar_layout(80, "envpool:Pong-v5", 3000)  # (URI on the bar's line, bar width)
    (False, 11)
    >>> bar_layout(120, "envpool:Pong-v5", 3000)
    (True, 35)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

ProgressCallback = Callable[[int, int], None]

MIN_BAR_WIDTH = 4
MAX_BAR_WIDTH = 40
RATE_WIDTH = len("99,999,999 env-steps/s")
EPISODES_WIDTH = len("99,999 episodes")
TIME_WIDTH = len("0:00:00")


def bar_layout(width: int, uri: str, steps: int) -> tuple[bool, int]:
    """Whether the URI fits on the bar's line of a ``width``-column terminal, and the bar's
    width, when every figure keeps the room it needs."""
    figures = [len(f"{steps}/{steps}"), RATE_WIDTH, EPISODES_WIDTH, TIME_WIDTH, 3, TIME_WIDTH]
    room = width - sum(figures) - len(figures)  # a space before each figure
    with_uri = room - len(uri) - 1
    if with_uri >= MIN_BAR_WIDTH:
        return True, min(with_uri, MAX_BAR_WIDTH)
    return False, max(MIN_BAR_WIDTH, min(room, MAX_BAR_WIDTH))


@contextmanager
def rollout_progress(
    uri: str, steps: int, *, enabled: bool, num_envs: int = 1
) -> Iterator[ProgressCallback | None]:
    """A live bar of batch steps, env-steps per second and finished episodes.

    Yields the bar's update callback, which takes ``(steps_done, episodes)``. When ``enabled``
    is false nothing is drawn and ``None`` is yielded, so the rollout loop skips the calls.
    """
    if not enabled:
        yield None
        return
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    from hub.cli.output import console

    out = console(stderr=True)
    uri_on_line, bar_width = bar_layout(out.width, uri, steps)

    def figure() -> Column:
        return Column(no_wrap=True)

    columns = [
        BarColumn(bar_width=bar_width),
        MofNCompleteColumn(table_column=figure()),
        TextColumn("{task.fields[rate]} env-steps/s", table_column=figure()),
        TextColumn("{task.fields[episodes]} episodes", table_column=figure()),
        TimeElapsedColumn(table_column=figure()),
        TextColumn("eta", table_column=figure()),
        TimeRemainingColumn(table_column=figure()),
    ]
    if uri_on_line:
        columns.insert(0, TextColumn("[bold]{task.description}", table_column=figure()))
    else:
        out.print(f"[bold]{escape(uri)}[/bold]", highlight=False)
    # 4 redraws a second: live enough, and the drawing thread takes little from the env's
    with Progress(*columns, console=out, refresh_per_second=4) as progress:
        task = progress.add_task(escape(uri), total=steps, episodes=0, rate="-")

        def on_progress(done: int, episodes: int) -> None:
            elapsed = progress.tasks[task].elapsed or 0.0
            rate = f"{done * num_envs / elapsed:,.0f}" if elapsed > 0 else "-"
            progress.update(task, completed=done, episodes=episodes, rate=rate)

        yield on_progress
