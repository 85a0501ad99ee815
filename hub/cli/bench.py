"""``hub bench``: RLlib's 2018 vector-env throughput table, measured on this machine.

CartPole with a 64x64 tanh MLP policy (the one of RLlib's table), actions per second at vector
widths 1, 8 and 64, on one core: the raw libraries' vector envs beside hub's batching paths over them. Every cell runs
in a fresh process (:mod:`hub.cli.bench_cell`) pinned to one core with torch on one thread;
the runs are interleaved (run ``r`` measures every cell before run ``r + 1`` starts) so that
drifts of the machine spread over all rows; a cell gives the median and the range of its runs.

Example:
    >>> report = run_bench(rows=["hub-serial"], widths=[2], runs=1, seconds=0.05, warmup=0.01)
    >>> report["cells"][0]["row"], report["cells"][0]["median"] > 0
    ('hub-serial', True)
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from hub.cli.output import console, echo_json, json_option

__all__ = ["RLLIB_2018", "bench", "default_rows", "run_bench", "strategy_rows", "summarize"]

# RLlib's published table (2018): CartPole-v0, one core, 64x64 MLP (actions per second)
RLLIB_2018 = {1: 2720.1, 8: 13773.0, 64: 37903.2}
RLLIB_ROW = "RLlib 2018 (published)"
DEFAULT_WIDTHS = (1, 8, 64)
QUICK = {"widths": (1, 8), "runs": 1, "seconds": 0.3, "warmup": 0.1, "one_process": True}
CELL_TIMEOUT_S = 300.0


def default_rows() -> list[str]:
    """The built-in rows whose library is installed. A plugin's batching strategy (``Ray``'s
    ``hub-batching-ray``, which starts a Ray instance) runs only when named in ``rows``:
    :func:`strategy_rows` lists them."""
    from hub.cli.bench_loops import BUILTIN_ROWS

    has = {name: importlib.util.find_spec(name) is not None for name in ("gymnasium", "envpool")}
    return [r for r in BUILTIN_ROWS if has["envpool" if "envpool" in r else "gymnasium"]]


def strategy_rows() -> list[str]:
    """One row per batching strategy that plugins register (``hub-batching-ray``)."""
    from hub.cli.bench_loops import hub_strategy_row
    from hub.registry import batching_strategies

    builtin = {"auto", "serial", "parallel", "native"}
    return [hub_strategy_row(s) for s in batching_strategies() if s not in builtin]


def _plan(
    rows: Sequence[str],
    envs: Sequence[str],
    widths: Sequence[int],
    runs: int,
    one_process: bool = False,
) -> list[tuple[int, tuple[str, ...], str, tuple[int, ...]]]:
    """``(run, rows, env, widths)`` for each process to start: one per cell, or with
    ``one_process`` one per env that measures every row and width in turn (``--quick``)."""
    if one_process:
        cells = [(tuple(rows), env, tuple(widths)) for env in envs]
    else:
        cells = [((row,), env, (width,)) for env in envs for width in widths for row in rows]
    plan = []
    for run in range(runs):  # each run starts one cell further, so no row is always first
        shift = run % len(cells) if cells else 0
        plan += [(run, *cell) for cell in cells[shift:] + cells[:shift]]
    return plan


def _run_cells(
    rows: Sequence[str],
    env: str,
    widths: Sequence[int],
    *,
    seconds: float,
    warmup: float,
    core: int | None,
) -> list[dict[str, Any]]:
    """Measure each of ``rows`` at each of ``widths`` in one fresh process; one result each."""
    command = [sys.executable, "-m", "hub.cli.bench_cell", ",".join(rows), env]
    command += [",".join(map(str, widths)), "--seconds", str(seconds), "--warmup", str(warmup)]
    if core is not None:
        command += ["--core", str(core)]
    wanted = [{"row": row, "env": env, "width": width} for row in rows for width in widths]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=len(wanted) * (CELL_TIMEOUT_S + seconds + warmup),
        )
    except subprocess.TimeoutExpired:
        return [{**cell, "error": "timed out"} for cell in wanted]
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            found[result.get("row"), result.get("width")] = result
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return [
        found.get(
            (cell["row"], cell["width"]), {**cell, "error": f"exit {done.returncode}: {tail}"}
        )
        for cell in wanted
    ]


def summarize(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (row, env, width): the runs' actions/s, their median, min and max."""
    cells: dict[tuple[str, str, int], dict[str, Any]] = {}
    for result in results:
        key = (result["row"], result["env"], result["width"])
        cell = cells.setdefault(
            key, {"row": key[0], "env": key[1], "width": key[2], "runs": [], "errors": []}
        )
        if "error" in result:
            cell["errors"].append(result["error"])
        else:
            cell["runs"].append(result["actions_per_s"])
    for cell in cells.values():
        runs = cell["runs"]
        cell["median"] = statistics.median(runs) if runs else None
        cell["min"] = min(runs) if runs else None
        cell["max"] = max(runs) if runs else None
    return list(cells.values())


def _versions() -> dict[str, str | None]:
    from hub.cli.introspect import distribution_version

    names = ("hub", "torch", "tensordict", "numpy", "gymnasium", "envpool")
    return {name: distribution_version(name) for name in names}


def run_bench(
    rows: Sequence[str] | None = None,
    widths: Sequence[int] = DEFAULT_WIDTHS,
    envs: Sequence[str] = ("CartPole-v1",),
    runs: int = 3,
    seconds: float = 3.0,
    warmup: float = 0.5,
    core: int | None = None,
    on_cell: Callable[[dict[str, Any]], None] | None = None,
    one_process: bool = False,
    all_cores: bool = False,
) -> dict[str, Any]:
    """Measure the table; returns the report (what ``hub bench --json`` prints).

    Each cell (row, env, width) runs in a fresh process, or with ``one_process`` every cell of
    an env runs in turn in one process (``--quick``: one start-up, which imports torch and the
    libraries, instead of one per cell; a rougher look, as cells then share the process). With
    ``all_cores`` the cells are not pinned (``config["core"]`` is then ``None``).
    """
    rows = list(default_rows() if rows is None else rows)
    if core is None and not all_cores and hasattr(os, "sched_getaffinity"):
        core = max(os.sched_getaffinity(0))
    results = []
    for _, cell_rows, env, cell_widths in _plan(rows, envs, widths, runs, one_process):
        for result in _run_cells(
            cell_rows, env, cell_widths, seconds=seconds, warmup=warmup, core=core
        ):
            results.append(result)
            if on_cell is not None:
                on_cell(result)
    return {
        "config": {
            "rows": rows,
            "widths": list(widths),
            "envs": list(envs),
            "runs": runs,
            "seconds": seconds,
            "warmup": warmup,
            "core": core,
            "one_process": one_process,
        },
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "versions": _versions(),
        "reference": {"row": RLLIB_ROW, "env": "CartPole-v0", "actions_per_s": RLLIB_2018},
        "cells": summarize(results),
    }


def ratio_to_raw(report: dict[str, Any], cell: dict[str, Any]) -> float | None:
    """A hub cell's median over its raw row's median (same env and width), if both ran."""
    from hub.cli.bench_loops import raw_row

    raw = raw_row(cell["row"])
    for other in report["cells"]:
        if (other["row"], other["env"], other["width"]) == (raw, cell["env"], cell["width"]):
            if other["median"] and cell["median"]:
                return cell["median"] / other["median"]
    return None


def _label(row: str) -> str:
    from hub.cli.bench_loops import BUILTIN_ROWS, STRATEGY_PREFIX, parallel_layout

    layout = parallel_layout(row)
    if layout is not None:
        ((name, value),) = layout.items()
        return f"hub ParallelEnv, {name}={value}"
    if row.startswith(STRATEGY_PREFIX):
        return f"hub batching={row[len(STRATEGY_PREFIX) :]!r}"
    return BUILTIN_ROWS.get(row, row)


def print_table(report: dict[str, Any]) -> None:
    """The table on stdout: median [min-max] actions/s, and each hub row's ratio to raw."""
    from rich.table import Table

    config = report["config"]
    for env in config["envs"]:
        cores = "all cores" if config["core"] is None else "one core"
        table = Table(title=f"{env}: actions/s on {cores}", title_justify="left")
        table.add_column("loop")
        for width in config["widths"]:
            table.add_column(f"W={width}", justify="right")
        if env == "CartPole-v1":
            published = report["reference"]["actions_per_s"]
            table.add_row(
                RLLIB_ROW,
                *(f"{published[w]:,.0f}" if w in published else "-" for w in config["widths"]),
            )
        for row in config["rows"]:
            cells = {c["width"]: c for c in report["cells"] if c["row"] == row and c["env"] == env}
            table.add_row(
                _label(row), *(_cell_text(report, cells.get(w)) for w in config["widths"])
            )
        console().print(table)


def _cell_text(report: dict[str, Any], cell: dict[str, Any] | None) -> str:
    if cell is None or cell["median"] is None:
        return "n/a" if cell is None or not cell["errors"] else "error"
    text = f"{cell['median']:,.0f}"
    if len(cell["runs"]) > 1:
        text += f" [{cell['min']:,.0f}-{cell['max']:,.0f}]"
    ratio = ratio_to_raw(report, cell)
    if ratio is not None:
        text += f" ({ratio:.2f}x)"
    return text


@click.command(short_help="RLlib's 2018 throughput table (CartPole, 64x64 MLP) on this machine.")
@click.option(
    "--widths",
    default=",".join(map(str, DEFAULT_WIDTHS)),
    show_default=True,
    help="Vector widths, comma-separated.",
)
@click.option(
    "--envs",
    "extra_envs",
    multiple=True,
    metavar="ID",
    help="Another env id to measure besides CartPole-v1 (repeatable), e.g. Pong-v5.",
)
@click.option(
    "--rows",
    default=None,
    help="Rows to run, comma-separated. Default: the built-in rows whose library is installed; "
    "a plugin's batching strategy runs only when named here (hub-batching-ray).",
)
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--seconds", type=click.FloatRange(min=0.01), default=3.0, show_default=True)
@click.option("--warmup", type=click.FloatRange(min=0.0), default=0.5, show_default=True)
@click.option("--core", type=int, default=None, help="The core to pin to (default: the last).")
@click.option(
    "--all-cores", is_flag=True, help="Pin nothing: every cell may use all CPUs (ParallelEnv rows)."
)
@click.option(
    "--quick",
    is_flag=True,
    help="Widths 1 and 8, one short run, every cell in one process: under a minute.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    metavar="FILE",
    help="Draw the table as a chart (.png or .svg).",
)
@json_option
def bench(
    widths: str,
    extra_envs: tuple[str, ...],
    rows: str | None,
    runs: int,
    seconds: float,
    warmup: float,
    core: int | None,
    all_cores: bool,
    quick: bool,
    plot: Path | None,
    as_json: bool,
) -> None:
    """Measure RLlib's 2018 throughput table (CartPole on one core with a 64x64 MLP policy,
    actions/s at vector widths 1, 8 and 64) on this machine: the raw libraries' vector envs
    beside hub's batching paths over them. Each cell runs in a fresh process pinned to one core;
    runs are interleaved; a cell shows the median [min-max] and, for hub rows, the ratio to the
    raw library.

    \b
    Examples:
      hub bench
      hub bench --quick --plot bench.png
      hub bench --envs Pong-v5 --rows envpool,hub-envpool --json
      hub bench --all-cores --rows gymnasium,hub-parallel,hub-parallel-w2,hub-parallel-e1
    """
    from rich.progress import Progress

    kwargs: dict[str, Any] = {"runs": runs, "seconds": seconds, "warmup": warmup}
    width_list = _int_list(widths)
    if quick:
        kwargs.update({k: v for k, v in QUICK.items() if k != "widths"})
        width_list = list(QUICK["widths"])
    envs = ["CartPole-v1", *extra_envs]
    row_list = None if rows is None else [r.strip() for r in rows.split(",") if r.strip()]
    total = len(row_list or default_rows()) * len(envs) * len(width_list) * kwargs["runs"]
    with Progress(console=console(stderr=True), transient=True, disable=as_json) as progress:
        task = progress.add_task("measuring", total=total)
        report = run_bench(
            row_list,
            width_list,
            envs,
            core=core,
            all_cores=all_cores,
            on_cell=lambda _: progress.advance(task),
            **kwargs,
        )
    if plot is not None:
        from hub.cli.bench_plot import plot_report

        plot_report(report, plot)
    if as_json:
        echo_json(report)
        return
    print_table(report)
    errors = [c for c in report["cells"] if c["errors"]]
    for cell in errors:
        console().print(f"{cell['row']} {cell['env']} W={cell['width']}: {cell['errors'][0]}")
    if row_list is None and strategy_rows():
        named = ",".join(strategy_rows())
        console().print(f"Plugins' batching strategies run when named: --rows {named}")
    if plot is not None:
        console().print(f"plot written to {plot}")


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected widths such as 1,8,64, got {text!r}") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"widths are positive integers such as 1,8,64, got {text!r}")
    return values
