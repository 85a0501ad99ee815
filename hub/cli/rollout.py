"""``hub rollout URI``: run an env with random actions and report speed, episodes and returns.

Example:
    >>> import json
    >>> from click.testing import CliRunner
    >>> result = CliRunner().invoke(rollout, ["hub:Pendulum", "--steps", "5", "--json"])  # doctest: +SKIP
    >>> json.loads(result.stdout)["env_steps"]  # doctest: +SKIP
    5
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from hub.cli.options import env_options, make_env_kwargs
from hub.cli.output import console, echo_json, is_tty, json_option

INTERRUPTED_EXIT_CODE = 130


@click.command(short_help="Run an env with random actions: steps/s, episodes, returns.")
@click.argument("uri")
@env_options
@click.option(
    "--steps",
    "-s",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Batch steps to run; each one steps every env once.",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write a video of the envs to FILE (.gif or .mp4): up to 8 envs tiled, each scaled "
    "to at least 256 px, with the step and each env's running return. The env's rendered RGB "
    "frames where it renders (e.g. -k render_mode=rgb_array), else its image observation.",
)
@click.option(
    "--record-envs",
    default=None,
    metavar="N|I,J,..",
    help="The envs to record: a count (the first N) or indices separated by commas "
    "(default: the first 8).",
)
@click.option(
    "--record-every",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="K",
    help="Record one step in K (a shorter, smaller file; the frames stay in memory until the end).",
)
@click.option(
    "--fps",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Frame rate of --record.",
)
@json_option
def rollout(
    uri: str,
    num_envs: int | None,
    batching: str | None,
    seed: int | None,
    kwargs: tuple[str, ...],
    steps: int,
    record: Path | None,
    record_envs: str | None,
    record_every: int,
    fps: float,
    as_json: bool,
) -> None:
    """Run URI with random actions: a progress bar, then steps/s, episodes and returns.

    Envs that end an episode are reset automatically. Ctrl-C stops early and still prints
    the summary of the steps that ran (exit code 130).

    \b
    Examples:
      hub rollout hub:Pendulum
      hub rollout gymnasium:CartPole-v1 --num-envs 8 --batching parallel --steps 2000
      hub rollout dm_control:cartpole/swingup -k from_pixels=True --record cartpole.gif
      hub rollout envpool:Pong-v5 -n 8 -k render_mode=rgb_array --record pong.gif --record-every 2
      hub rollout envpool:Pong-v5 -n 16 --json
    """
    from hub.cli.building import build_env, seed_everything

    if record is not None:
        from hub.media import check_video_path

        check_video_path(record)
    seed_everything(seed)
    show_progress = not as_json and is_tty(sys.stderr)
    env = build_env(uri, make_env_kwargs(num_envs, batching, seed, kwargs))
    try:
        recording = None
        if record is not None:
            recording = _recording(env, uri, record_envs, record_every)
        result = _run(env, uri, steps, recording, show_progress)
        if record is not None and result.frames:
            from hub.media import write_video

            write_video(record, result.frames, fps)
    finally:
        env.close()
    summary = summarize(uri, env, result, batching=batching, seed=seed, record=record)
    if as_json:
        echo_json(summary)
    else:
        print_summary(summary)
    if result.interrupted:
        raise click.exceptions.Exit(INTERRUPTED_EXIT_CODE)


def _recording(env: Any, uri: str, record_envs: str | None, every: int) -> Any:
    """What ``--record`` keeps: the chosen envs' frames, one step in ``every``."""
    from hub.cli.recording import TiledRecording, parse_record_envs
    from hub.media import FrameSource

    env_ids = parse_record_envs(record_envs, math.prod(env.batch_size))
    source = FrameSource.for_env(env, uri, env.full_observation_spec)
    return TiledRecording(source, env_ids, every=every, title=uri)


def _run(env: Any, uri: str, steps: int, recording: Any, show_progress: bool) -> Any:
    """The rollout, recording when asked, with a progress bar when asked."""
    from hub.cli.progress import rollout_progress
    from hub.cli.rollout_loop import run_rollout

    num_envs = math.prod(env.batch_size)
    with rollout_progress(uri, steps, enabled=show_progress, num_envs=num_envs) as on_progress:
        return run_rollout(env, steps, recording=recording, on_progress=on_progress)


def summarize(
    uri: str,
    env: Any,
    result: Any,
    *,
    batching: str | None,
    seed: int | None,
    record: Path | None,
) -> dict[str, Any]:
    """The rollout's summary: the keys of ``hub rollout --json``.

    Example:
        >>> summarize("hub:Counting", env, result, batching=None, seed=0, record=None)  # doctest: +SKIP
        {'uri': 'hub:Counting', 'num_envs': 1, 'steps': 10, 'env_steps': 10, ...}
    """
    summary: dict[str, Any] = {
        "uri": uri,
        "num_envs": result.num_envs,
        "steps": result.steps,
        "env_steps": result.env_steps,
        "seconds": round(result.seconds, 6),
        "steps_per_s": result.steps_per_s,
        **result.tracker.summary(),
        "batch_size": list(env.batch_size),
        "env_class": type(env).__name__,
        "batching": batching or "auto",
        "seed": seed,
        "interrupted": result.interrupted,
        "record": str(record) if record is not None and result.frames else None,
    }
    return summary


def _fmt(value: Any, spec: str = ".3f") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def print_summary(summary: dict[str, Any]) -> None:
    """Print the summary as a two-column table on stdout.

    Example:
        >>> print_summary({"uri": "hub:Counting", "steps": 3})  # doctest: +SKIP
    """
    from rich.table import Table

    table = Table(title=f"rollout {summary['uri']}", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("", justify="right", overflow="fold")
    rows = [
        ("env", f"{summary.get('env_class', '?')}  batch {summary.get('batch_size', [])}"),
        ("num_envs", _fmt(summary.get("num_envs"))),
        ("batching", _fmt(summary.get("batching"))),
        ("seed", _fmt(summary.get("seed"))),
        ("steps", _fmt(summary.get("steps"))),
        ("env steps", _fmt(summary.get("env_steps"))),
        ("seconds", _fmt(summary.get("seconds"))),
        ("steps/s", _fmt(summary.get("steps_per_s"), ",.0f")),
        ("episodes", _fmt(summary.get("episodes"))),
        ("mean return", _fmt(summary.get("mean_return"))),
        (
            "min / max return",
            f"{_fmt(summary.get('min_return'))} / {_fmt(summary.get('max_return'))}",
        ),
        ("mean length", _fmt(summary.get("mean_length"), ".1f")),
    ]
    if summary.get("record"):
        rows.append(("recorded", summary["record"]))
    for name, value in rows:
        table.add_row(name, value)
    out = console()
    out.print(table)
    if not summary.get("episodes"):
        out.print(
            f"No episode finished in {summary.get('steps')} steps; run more steps (--steps) "
            "to see returns."
        )
    if summary.get("interrupted"):
        out.print(f"Interrupted after {summary.get('steps')} steps.")
