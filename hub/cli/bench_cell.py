"""One cell of ``hub bench``, run in a fresh process: one row, one width, one env, one core.

``python -m hub.cli.bench_cell ROW ENV_ID WIDTH --seconds S --warmup W --core C`` pins itself
(and so every thread and process it starts) to core ``C``, runs torch on one thread, builds the
row's loop (:mod:`hub.cli.bench_loops`), steps it for ``W`` seconds of warm-up, then counts the
vector steps of the next ``S`` seconds, and prints one JSON line:
``{"row", "env", "width", "steps", "seconds", "actions_per_s"}`` (or ``"error"``). ``ROW`` and
``WIDTH`` may list several (``gymnasium,hub-serial`` and ``1,8``): every row at every width is
measured in turn, one line each (``hub bench --quick``).

Example:
    >>> cell = measure_cell("hub-serial", "CartPole-v1", 2, seconds=0.05, warmup=0.01)
    >>> cell["actions_per_s"] > 0
    True
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from typing import Any

__all__ = ["measure_cell", "pin_to_core"]


def pin_to_core(core: int | None) -> None:
    """Pin this process (and what it starts later) to one core; torch on one thread."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    import torch

    torch.set_num_threads(1)


def measure_cell(
    row: str, env_id: str, width: int, *, seconds: float = 3.0, warmup: float = 0.5
) -> dict[str, Any]:
    """Actions per second of one row at one width (``width`` x vector steps / wall seconds)."""
    from hub.cli.bench_loops import build_loop

    step, close = build_loop(row, env_id, width)
    try:
        deadline = time.perf_counter() + warmup
        while time.perf_counter() < deadline:
            step()
        steps = 0
        start = time.perf_counter()
        deadline = start + seconds
        now = start
        while now < deadline:
            step()
            steps += 1
            now = time.perf_counter()
        elapsed = now - start
    finally:
        close()
    return {
        "row": row,
        "env": env_id,
        "width": width,
        "steps": steps,
        "seconds": elapsed,
        "actions_per_s": steps * width / elapsed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hub.cli.bench_cell")
    parser.add_argument("rows", help="one row, or several separated by commas")
    parser.add_argument("env_id")
    parser.add_argument("widths", help="one width, or several separated by commas")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--core", type=int, default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the libraries' warnings at make time say nothing of speed
    pin_to_core(args.core)
    widths = [int(w) for w in args.widths.split(",") if w.strip()]
    for row in (r.strip() for r in args.rows.split(",") if r.strip()):
        for width in widths:
            try:
                cell = measure_cell(
                    row, args.env_id, width, seconds=args.seconds, warmup=args.warmup
                )
            except Exception as err:  # reported as the cell's result: the table shows it
                cell = {
                    "row": row,
                    "env": args.env_id,
                    "width": width,
                    "error": f"{type(err).__name__}: {err}",
                }
            sys.stdout.write(json.dumps(cell) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
